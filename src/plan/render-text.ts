import type { Change, ChangeResult, Plan } from '../model/index.js';
import type { Report } from './report.js';
import { quoteKey, renderField, safeText } from './render-value.js';
import { summarize } from './summary.js';

export interface TextOptions {
  /** ANSI colours; the caller decides (TTY and NO_COLOR). */
  readonly color: boolean;
}

const marker = { create: '+', update: '~', delete: '-' } as const;
const verb = { create: 'will be created', update: 'will be updated in place', delete: 'will be deleted' } as const;
const done = { create: 'created', update: 'updated', delete: 'deleted' } as const;

/** A plan in the manner of `terraform plan`: markers, field diffs, a summary line. */
export function renderText(report: Report, options: TextOptions): string {
  const paint = painter(options.color);
  const { plan } = report;
  const lines: string[] = [];
  for (const note of plan.notes) lines.push(paint('yellow', `Note: ${note}`));
  if (plan.notes.length > 0) lines.push('');
  for (const p of plan.problems) {
    const where = p.source ? `${p.source.file}:${p.source.line}:${p.source.col}: ` : '';
    lines.push(paint('red', `Error: ${where}${p.kind} ${quoteKey(p.key)}: ${safeText(p.message)}`));
  }
  if (plan.problems.length > 0) lines.push('');

  if (plan.changes.length > 0) {
    lines.push('amsync will perform the following actions:', '');
    for (const change of plan.changes) lines.push(...renderChange(change, paint, report.roleNames), '');
  }
  if (plan.protected.length > 0) {
    lines.push(`Protected (left alone by a protect glob): ${plan.protected.map((p) => `${p.kind} ${quoteKey(p.key)} (id ${p.id})`).join(', ')}`);
  }
  if (plan.unmanaged.length > 0) {
    lines.push(`Unmanaged (not in the file, not pruned): ${plan.unmanaged.map((u) => `${u.kind} ${quoteKey(u.key)} (id ${u.id})`).join(', ')}`);
  }
  if (plan.protected.length > 0 || plan.unmanaged.length > 0) lines.push('');
  lines.push(summaryLine(plan, paint));
  if (report.results && report.results.length > 0) {
    lines.push('', ...renderResults(report.results, paint));
  }
  return `${lines.join('\n')}\n`;
}

function renderChange(change: Change, paint: Paint, roleNames: ReadonlyMap<number, string> | undefined): string[] {
  const color = change.action === 'create' ? 'green' : change.action === 'update' ? 'yellow' : 'red';
  const id = change.id === null ? '' : ` (id ${change.id})`;
  const reason = change.reason ? ` (${change.reason})` : '';
  const head = `  # ${change.kind} ${quoteKey(change.key)}${id} ${verb[change.action]}${reason}`;
  const names = Object.keys(change.fields);
  const width = Math.max(0, ...names.map((n) => n.length));
  const body = names.map((name) => {
    const f = change.fields[name]!;
    const pad = name.padEnd(width);
    const show = (value: unknown) => renderField(name, value, roleNames);
    if (change.action === 'create') return `      ${paint(color, '+')} ${pad} = ${show(f.after)}`;
    if (change.action === 'delete') return `      ${paint(color, '-')} ${pad} = ${show(f.before)}`;
    return `      ${paint(color, '~')} ${pad} = ${show(f.before)} -> ${show(f.after)}`;
  });
  return [head, `  ${paint(color, marker[change.action])} ${change.kind} ${quoteKey(change.key)} {`, ...body, '    }'];
}

function summaryLine(plan: Plan, paint: Paint): string {
  const s = summarize(plan);
  if (plan.changes.length === 0) {
    return paint('green', `No changes. The service matches the desired state (${s.unchanged} unchanged, ${s.unmanaged} unmanaged).`);
  }
  return `${paint('bold', 'Plan:')} ${s.create} to create, ${s.update} to update, ${s.delete} to delete, ${s.unchanged} unchanged, ${s.unmanaged} unmanaged.`;
}

function renderResults(results: readonly ChangeResult[], paint: Paint): string[] {
  const lines = results.map((r) => {
    const what = `${r.kind} ${quoteKey(r.key)}`;
    const drift = r.drift ? ` (drift: ${safeText(r.drift)})` : '';
    if (r.status === 'applied') return `${paint('green', '✓')} ${done[r.action]} ${what}${drift}`;
    if (r.status === 'skipped') return `${paint('yellow', '·')} skipped ${r.action} of ${what}${r.error ? `: ${safeText(r.error)}` : ''}${drift}`;
    return `${paint('red', '✗')} failed to ${r.action} ${what}: ${safeText(r.error ?? 'unknown error')}${drift}`;
  });
  const applied = results.filter((r) => r.status === 'applied').length;
  const failed = results.filter((r) => r.status === 'failed').length;
  const skipped = results.filter((r) => r.status === 'skipped').length;
  lines.push('', `Apply: ${applied} applied, ${failed} failed, ${skipped} skipped.`);
  return lines;
}

type Color = 'green' | 'yellow' | 'red' | 'bold';
type Paint = (color: Color, text: string) => string;
const codes: Record<Color, [number, number]> = { green: [32, 39], yellow: [33, 39], red: [31, 39], bold: [1, 22] };

function painter(enabled: boolean): Paint {
  return (color, text) => (enabled ? `\u001b[${codes[color][0]}m${text}\u001b[${codes[color][1]}m` : text);
}
