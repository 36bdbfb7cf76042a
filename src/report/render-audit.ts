import { isControlLine, type AuditControlLine, type AuditLine, type AuditReading, type AuditRecord } from '../audit/index.js';
import { escapeControls } from '../text/index.js';

const columns = ['time', 'action', 'kind', 'key', 'id', 'status', 'trigger', 'revision'] as const;

/**
 * The lines as an aligned text table; names escaped (they come from files others write). A
 * daemon's control line takes the same columns: its event as the action, `daemon` as the kind,
 * its reason as the key, who asked as the status, `ctl` or `window` as the trigger.
 */
export function renderAuditTable(lines: readonly AuditRecord[]): string {
  if (lines.length === 0) return 'no matching audit lines\n';
  const rows = lines.map((line) => (isControlLine(line) ? controlRow(line) : writeRow(line)));
  const widths = columns.map((name, i) => rows.reduce((width, row) => Math.max(width, row[i]!.length), name.length));
  const format = (cells: readonly string[]) => `${cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')}\n`;
  return [format(columns), ...rows.map(format)].join('');
}

function controlRow(line: AuditControlLine): string[] {
  const byWindow = line.event === 'window_closed' || line.event === 'window_opened';
  return [
    line.time,
    line.event,
    'daemon',
    line.reason === null ? '-' : escapeControls(line.reason),
    '-',
    line.uid === null ? '-' : `by uid ${line.uid}`,
    byWindow ? 'window' : 'ctl',
    line.revision === null ? '-' : escapeControls(line.revision.slice(0, 12)),
  ];
}

function writeRow(line: AuditLine): string[] {
  return [
    line.time,
    line.action,
    line.kind,
    escapeControls(line.key),
    line.id === null ? '-' : String(line.id),
    line.phase === 'attempt' ? 'attempt' : `${line.status ?? '?'}${line.error ? ` (${escapeControls(line.error)})` : ''}`,
    line.trigger,
    line.revision === null ? '-' : escapeControls(line.revision.slice(0, 12)),
  ];
}

/** The stderr line for lines passed over (partial or not audit lines), or undefined when there were none. */
export function auditReadWarning(read: Pick<AuditReading, 'partialLines' | 'invalidLines' | 'firstProblem'>): string | undefined {
  if (read.partialLines === 0 && read.invalidLines === 0) return undefined;
  const where = read.firstProblem ? ` (first: ${escapeControls(read.firstProblem.file)}:${read.firstProblem.line})` : '';
  const parts = [
    ...(read.partialLines > 0 ? [`${read.partialLines} partial last line${read.partialLines === 1 ? '' : 's'} (a write cut short by a crash or a full disk)`] : []),
    ...(read.invalidLines > 0 ? [`${read.invalidLines} line${read.invalidLines === 1 ? '' : 's'} that are not audit lines`] : []),
  ];
  return `warning: passed over ${parts.join(' and ')}${where}\n`;
}
