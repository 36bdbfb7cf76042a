import type { Command } from 'commander';
import * as z from 'zod';
import { filterAuditLines, parseTimeBound, type AuditFilter, readAuditLog } from '../audit/index.js';
import type { AuditLine } from '../audit/index.js';
import { UsageError } from '../errors.js';
import type { Action } from '../model/index.js';
import { loadSettings } from '../settings/index.js';
import { escapeControls, jsonSafe } from '../text/index.js';
import type { CommandContext } from './command-context.js';
import type { CliIo } from './io.js';
import { badFlag } from './shared-options.js';

export interface AuditOptions {
  readonly key?: string;
  readonly action?: string;
  readonly since?: string;
  readonly until?: string;
  readonly json?: boolean;
  readonly includeRotated?: boolean;
  readonly settings?: string;
}

const actions = ['create', 'update', 'delete'] as const satisfies readonly Action[];
const actionSchema = z.enum(actions);

/**
 * `amsync audit [FILE]`: the audit log (`auditLog`, DESIGN.md §10) as a table, or as JSON
 * lines with `--json`, filtered by key, action and time. Reads only the file: never the
 * service. A last line cut short (a crash, a full disk) is passed over and said so on stderr.
 */
export function registerAuditCommand(program: Command, ctx: CommandContext): void {
  program
    .command('audit')
    .description('print the audit log of writes (the auditLog setting) as a table, filtered by key, action and time')
    .argument('[FILE]', 'the audit log (default: the auditLog setting: AMSYNC_AUDIT_LOG or --settings FILE)')
    .option('--key <KEY>', 'only lines of this username or apikey name')
    .option('--action <ACTION>', 'only create, update or delete', (value: string) => {
      const parsed = actionSchema.safeParse(value);
      if (!parsed.success) throw badFlag('--action', 'one of create, update, delete', value);
      return parsed.data;
    })
    .option('--since <TIME>', 'only lines at or after TIME: ISO-8601 (2025-01-31, 2025-01-31T12:00:00Z) or an age (90s, 30m, 24h, 7d, 2w)')
    .option('--until <TIME>', 'only lines at or before TIME (same forms as --since)')
    .option('--json', 'print the matching lines as JSON lines, one audit line each')
    .option('--include-rotated', 'also read the rotated files FILE.N … FILE.1, oldest first')
    .option('--settings <FILE>', 'settings file whose auditLog names the log when FILE is not given (AMSYNC_SETTINGS)')
    .action(async (file: string | undefined, opts: AuditOptions) => {
      await printAudit(file, opts, ctx.io);
    });
}

async function printAudit(given: string | undefined, opts: AuditOptions, io: CliIo): Promise<void> {
  const filter = auditFilter(opts, io.timers.wallNow());
  const file = given ?? (await settingsAuditLog(opts, io));
  const read = await readAuditLog(file, { includeRotated: opts.includeRotated === true });
  const lines = filterAuditLines(read.lines, filter);
  if (opts.json === true) {
    // One line each, as written; jsonSafe keeps bidi and C1 characters from restyling a terminal.
    for (const line of lines) io.stdout.write(`${jsonSafe(JSON.stringify(line))}\n`);
  } else {
    io.stdout.write(renderAuditTable(lines));
  }
  if (read.partialLines > 0 || read.invalidLines > 0) {
    const where = read.firstProblem ? ` (first: ${escapeControls(read.firstProblem.file)}:${read.firstProblem.line})` : '';
    const parts = [
      ...(read.partialLines > 0 ? [`${read.partialLines} partial last line${read.partialLines === 1 ? '' : 's'} (a write cut short by a crash or a full disk)`] : []),
      ...(read.invalidLines > 0 ? [`${read.invalidLines} line${read.invalidLines === 1 ? '' : 's'} that are not audit lines`] : []),
    ];
    io.stderr.write(`warning: passed over ${parts.join(' and ')}${where}\n`);
  }
}

/** The flags -> a filter; a bad value is exit 64 naming the flag. */
export function auditFilter(opts: AuditOptions, nowMs: number): AuditFilter {
  const bound = (flag: string, text: string | undefined): number | undefined => {
    if (text === undefined) return undefined;
    const ms = parseTimeBound(text, nowMs);
    if (ms === undefined) throw badFlag(flag, 'an ISO-8601 time (2025-01-31T12:00:00Z) or an age such as 24h, 30m or 7d', text);
    return ms;
  };
  const since = bound('--since', opts.since);
  const until = bound('--until', opts.until);
  if (since !== undefined && until !== undefined && since > until) throw new UsageError(`--since (${opts.since}) is after --until (${opts.until}): no line could match`, 'bad_flag_value');
  if (opts.action !== undefined && !actionSchema.safeParse(opts.action).success) throw badFlag('--action', 'one of create, update, delete', opts.action);
  return {
    ...(opts.key !== undefined ? { key: opts.key } : {}),
    ...(opts.action !== undefined ? { action: opts.action as Action } : {}),
    ...(since !== undefined ? { since } : {}),
    ...(until !== undefined ? { until } : {}),
  };
}

async function settingsAuditLog(opts: AuditOptions, io: CliIo): Promise<string> {
  const settings = await loadSettings({ ...(opts.settings !== undefined ? { settingsFile: opts.settings } : {}), env: io.env });
  if (settings.auditLog === undefined) throw new UsageError('name the audit log: amsync audit FILE, or set AMSYNC_AUDIT_LOG (or auditLog in --settings FILE)', 'no_audit_log');
  return settings.auditLog;
}

const columns = ['time', 'action', 'kind', 'key', 'id', 'status', 'trigger', 'revision'] as const;

/** The lines as an aligned text table; names escaped (they come from files others write). */
export function renderAuditTable(lines: readonly AuditLine[]): string {
  if (lines.length === 0) return 'no matching audit lines\n';
  const rows = lines.map((line) => [
    line.time,
    line.action,
    line.kind,
    escapeControls(line.key),
    line.id === null ? '-' : String(line.id),
    line.phase === 'attempt' ? 'attempt' : `${line.status ?? '?'}${line.error ? ` (${escapeControls(line.error)})` : ''}`,
    line.trigger,
    line.revision === null ? '-' : escapeControls(line.revision.slice(0, 12)),
  ]);
  const widths = columns.map((name, i) => rows.reduce((width, row) => Math.max(width, row[i]!.length), name.length));
  const format = (cells: readonly string[]) => `${cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')}\n`;
  return [format(columns), ...rows.map(format)].join('');
}
