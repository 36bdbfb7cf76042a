import { approvalHint, fieldEntries, formatRemaining, type ApprovalGate, type ApprovalStatus, type Change, type ChangeResult, type ItemRef, type Plan } from '../model/index.js';
import { positionText, type Report } from './report.js';
import { afterValue, quoteKey, renderField, safeText, unavailableOf } from './render-value.js';
import { keyRotationReason, summarize } from '../plan/index.js';

export interface TextOptions {
  /** ANSI colours; the caller decides (TTY and NO_COLOR). */
  readonly color: boolean;
  /**
   * Items of the unmanaged and of the protected list shown before "… and N more".
   * @default 50
   */
  readonly listLimit?: number;
}

/** Enough to see what is there; the JSON document and the report have them all. */
export const defaultListLimit = 50;

const marker = { create: '+', update: '~', delete: '-' } as const;
const verb = { create: 'will be created', update: 'will be updated in place', delete: 'will be deleted' } as const;
const done = { create: 'created', update: 'updated', delete: 'deleted' } as const;

/**
 * A plan in the manner of `terraform plan`: markers, field diffs, a summary line, and the
 * results when it was applied. The same text as renderPlanText, then each resultLine, then
 * applySummary: `sync` prints those pieces as they happen.
 */
export function renderText(report: Report, options: TextOptions): string {
  const planText = renderPlanText(report, options);
  if (!report.results || report.results.length === 0) return planText;
  const paint = painter(options.color);
  const lines = report.results.filter((r) => r.notStarted !== true).map((r) => resultLine(r, paint));
  lines.push(...renderNotStarted(report.results, options));
  return `${planText}\n${lines.map((l) => `${l}\n`).join('')}${applySummary(report.results)}`;
}

/** The plan alone: what `sync` shows before it applies (and asks, at a terminal). */
export function renderPlanText(report: Report, options: TextOptions): string {
  const paint = painter(options.color);
  const { plan } = report;
  const lines: string[] = [];
  for (const note of plan.notes) lines.push(paint('yellow', `Note: ${safeText(note)}`));
  if (plan.ignored) lines.push(ignoredLine(plan.ignored));
  if (plan.notes.length > 0 || plan.ignored) lines.push('');
  for (const p of plan.problems) {
    const where = p.source ? safeText(`${p.source.file}:${p.source.line}:${p.source.col}: `) : '';
    lines.push(paint('red', `Error: ${where}${p.kind} ${quoteKey(p.key)}: ${safeText(p.message)}`));
  }
  if (plan.problems.length > 0) lines.push('');

  const gates = new Map((report.approval?.review.gates ?? []).map((g) => [g.index, g]));
  const approved = new Set(report.approval?.approved ?? []);
  const withheld = new Set(report.approval?.withheld ?? []);
  if (plan.changes.length > 0) {
    lines.push('amsync will perform the following actions:', '');
    const unavailable = unavailableOf(plan);
    plan.changes.forEach((change, i) => {
      const notes: string[] = [];
      if (report.sources && change.source) notes.push(`  # from ${safeText(positionText(change.source))}`);
      const gate = gates.get(i);
      if (gate) notes.push(paint('yellow', `  # ${approved.has(i) ? 'approved' : 'needs approval'} (${gate.rules.join(', ')}): ${gate.hash}`));
      else if (withheld.has(i)) notes.push(paint('yellow', '  # waits for a change that needs approval'));
      lines.push(...renderChange(change, paint, report.roleNames, notes, unavailable), '');
    });
  }
  if (gates.size > 0) lines.push(...approvalSection(report, paint), '');
  for (const w of report.approval?.review.warnings ?? []) lines.push(paint('yellow', `Policy: ${w.rule}: ${safeText(w.message)}`), '');
  const limit = options.listLimit ?? defaultListLimit;
  if (plan.observed) lines.push(...observedSection(plan.observed, paint, report.roleNames), '');
  if (plan.expiries) lines.push(...expiriesSection(plan, limit), '');
  if (plan.protected.length > 0) lines.push(...itemList('Protected (left alone by a protect glob):', plan.protected, limit), '');
  if (plan.unmanaged.length > 0) lines.push(...itemList('Unmanaged (not in the file, not pruned):', plan.unmanaged, limit), '');
  lines.push(summaryLine(plan, paint));
  return `${lines.join('\n')}\n`;
}

/** One item a line (a list of 2,000 names on one line helps no one), cut after `limit`. */
function itemList(title: string, items: readonly ItemRef[], limit: number): string[] {
  const shown = items.slice(0, limit).map((i) => `  ${i.kind} ${quoteKey(i.key)} (id ${i.id})`);
  const more = items.length - shown.length;
  return [title, ...shown, ...(more > 0 ? [`  … and ${more.toLocaleString('en-US')} more (all of them: --json, or --report FILE)`] : [])];
}

/**
 * The changes that need approval, each with its hash, and the one hash that approves them all
 * (what `--approve` takes, and what sync asks for at a terminal).
 */
function approvalSection(report: Report, paint: Paint): string[] {
  const status = report.approval!;
  const { gates } = status.review;
  const approved = new Set(status.approved);
  const pending = gates.filter((g) => !approved.has(g.index));
  const n = gates.length;
  const title =
    pending.length === 0
      ? `Approved: ${n === 1 ? 'the change' : `all ${n} changes`} that need${n === 1 ? 's' : ''} approval.`
      : `Needs approval: ${pending.length} of the changes escalate${pending.length === 1 ? 's' : ''} privilege; amsync applies ${pending.length === 1 ? 'it' : 'them'} only when approved.`;
  const line = (g: ApprovalGate) => {
    const c = report.plan.changes[g.index]!;
    return `  ${g.hash}  ${c.action} ${c.kind} ${quoteKey(c.key)} (${g.rules.join(', ')})${approved.has(g.index) ? ' approved' : ''}`;
  };
  const out = [paint('yellow', title), ...gates.map(line)];
  // A plan the policy refuses is not applied, approved or not: say that instead (the error says why).
  if (status.review.violations.length > 0) out.push('  The policy refuses this plan (the error says why): approving these would not apply it.');
  else if (pending.length > 0) out.push(`  To approve: ${approveWith(status, n)}; applying a reviewed saved plan (amsync apply) approves them.`);
  return out;
}

/** The set hash while none of the set is approved; after that, the pending changes' own hashes (see approvalHint). */
function approveWith(status: ApprovalStatus, n: number): string {
  const hint = approvalHint(status);
  if (hint.setHash) return `${hint.flags} (${n === 1 ? 'the change listed' : `all ${n} listed`}), or a change's own hash`;
  return `${hint.flags} (${hint.hashes.length === 1 ? 'the one not approved' : `the ${hint.hashes.length} not approved`})`;
}

function renderChange(change: Change, paint: Paint, roleNames: ReadonlyMap<number, string> | undefined, notes: readonly string[] = [], unavailable: ReadonlySet<string> = new Set()): string[] {
  const color = change.action === 'create' ? 'green' : change.action === 'update' ? 'yellow' : 'red';
  const id = change.id === null ? '' : ` (id ${change.id})`;
  const reason = change.reason ? ` (${safeText(change.reason)})` : '';
  // `--replace` of an apikey: the successor's create is the `-/+` of the pair, as Terraform shows a replacement.
  const replaces = change.replaces;
  const head =
    replaces === undefined
      ? `  # ${change.kind} ${quoteKey(change.key)}${id} ${verb[change.action]}${reason}`
      : change.reason?.startsWith(keyRotationReason) === true
        ? // A scheduled rotation (rotate: {every, overlap}): the old key's delete is its own change, now or after the overlap.
          `  # ${change.kind} ${quoteKey(change.key)} (id ${replaces}) will be rotated${reason}: a successor key is created and its token written`
        : `  # ${change.kind} ${quoteKey(change.key)} (id ${replaces}) will be replaced: a new key is created and its token written, then id ${replaces} is deleted`;
  const fields = fieldEntries(change);
  const width = Math.max(0, ...fields.map(([n]) => n.length));
  const body = fields.map(([name, f]) => {
    const pad = name.padEnd(width);
    const show = (value: unknown) => renderField(name, value, roleNames);
    const after = afterValue(change, name, f.after, unavailable);
    if (change.action === 'create') return `      ${paint(color, '+')} ${pad} = ${show(after)}`;
    if (change.action === 'delete') return `      ${paint(color, '-')} ${pad} = ${show(f.before)}`;
    return `      ${paint(color, '~')} ${pad} = ${show(f.before)} -> ${show(after)}`;
  });
  const sign = replaces === undefined ? marker[change.action] : '-/+';
  const renamed = change.renamedFrom === undefined ? '' : ` (renamed from ${quoteKey(change.renamedFrom)})`;
  return [head, ...notes, `  ${paint(color, sign)} ${change.kind} ${quoteKey(change.key)}${renamed} {`, ...body, '    }'];
}

/** Names shown per ignored field before "and N more". */
const ignoredKeysShown = 5;

/** `Ignored (…): apikey roles (every apikey); sshUser level ("alice")`: the plan's header line. */
function ignoredLine(ignored: NonNullable<Plan['ignored']>): string {
  const parts = ignored.map(({ kind, field, keys }) => {
    if (keys === 'all') return `${kind} ${field} (every ${kind})`;
    const shown = keys.slice(0, ignoredKeysShown).map(quoteKey).join(', ');
    const more = keys.length > ignoredKeysShown ? ` and ${keys.length - ignoredKeysShown} more` : '';
    return `${kind} ${field} (${shown}${more})`;
  });
  return `Ignored fields (sent on create, never updated, not drift): ${parts.join('; ')}`;
}

/** Drift of observed items: shown as the changes a sync would make, and that it does not make. */
function observedSection(observed: readonly Change[], paint: Paint, roleNames: ReadonlyMap<number, string> | undefined): string[] {
  const n = observed.length;
  const out = [paint('yellow', `Observed only (mode: observe): ${n} item${n === 1 ? ' has' : 's have'} drifted; reported, not written:`), ''];
  observed.forEach((change, i) => {
    const [, ...rest] = renderChange(change, paint, roleNames);
    const id = change.id === null ? '' : ` (id ${change.id})`;
    const would = { create: 'missing: not created', update: 'drifted: not updated', delete: 'not deleted' }[change.action];
    out.push(`  # ${change.kind} ${quoteKey(change.key)}${id} ${would} (observe only)${change.reason ? ` (${safeText(change.reason)})` : ''}`, ...rest);
    if (i < n - 1) out.push('');
  });
  return out;
}

/** `  sshUser "contractor" (id 7): expires in 2d 4h (2026-12-31T18:00:00Z)`: each declared item with an expiry ahead. */
function expiriesSection(plan: Plan, limit: number): string[] {
  const expiries = plan.expiries ?? [];
  const shown = expiries.slice(0, limit).map((e) => {
    const id = e.id === null ? ' (new)' : ` (id ${e.id})`;
    return `  ${e.kind} ${quoteKey(e.key)}${id}: expires in ${formatRemaining(e.remainingSeconds * 1000)} (${e.expiresAt})`;
  });
  const more = expiries.length - shown.length;
  return ['Expiring (expires / ttl):', ...shown, ...(more > 0 ? [`  … and ${more.toLocaleString('en-US')} more (all of them: --json, or --report FILE)`] : [])];
}

function summaryLine(plan: Plan, paint: Paint): string {
  const s = summarize(plan);
  const n = plan.observed?.length ?? 0;
  const observed = n === 0 ? '' : `\n${paint('yellow', `Observed: ${n} item${n === 1 ? '' : 's'} drifted (observe only: not corrected).`)}`;
  if (plan.changes.length === 0) {
    return `${paint('green', `No changes. The service matches the desired state (${s.unchanged} unchanged, ${s.unmanaged} unmanaged).`)}${observed}`;
  }
  const expired = s.expired === undefined ? '' : ` (${s.expired} expired)`;
  return `${paint('bold', 'Plan:')} ${s.create} to create, ${s.update} to update, ${s.delete} to delete${expired}, ${s.unchanged} unchanged, ${s.unmanaged} unmanaged.${observed}`;
}

/** `✓ created sshUser "deploy"`: one result, as it is known. */
export function renderResultLine(r: ChangeResult, options: TextOptions): string {
  return resultLine(r, painter(options.color));
}

function resultLine(r: ChangeResult, paint: Paint): string {
  const what = `${r.kind} ${quoteKey(r.key)}`;
  const drift = r.drift ? ` (drift: ${safeText(r.drift)})` : '';
  const approval = r.approval ? ` (approved: ${r.approval})` : '';
  const replacement = r.replaces !== undefined ? ` (id ${r.id ?? '?'}, replaces id ${r.replaces})` : r.replacedBy !== undefined ? ` (id ${r.id ?? '?'}, replaced by id ${r.replacedBy})` : '';
  if (r.status === 'applied') return `${paint('green', '✓')} ${done[r.action]} ${what}${replacement}${approval}${drift}`;
  if (r.status === 'skipped') return `${paint('yellow', '·')} skipped ${r.action} of ${what}${r.error ? `: ${safeText(r.error)}` : ''}${drift}`;
  return `${paint('red', '✗')} failed to ${r.action} ${what}: ${safeText(r.error ?? 'unknown error')}${drift}`;
}

/**
 * `· 90 changes not started: interrupted (SIGINT)`: the changes a stop kept from being sent,
 * counted (one line per reason), not listed — after Ctrl-C on a deep queue a line each would
 * bury the results that happened.
 */
export function renderNotStarted(results: readonly ChangeResult[], options: TextOptions): string[] {
  const byReason = new Map<string, number>();
  for (const r of results) if (r.notStarted === true) byReason.set(r.error ?? 'not started', (byReason.get(r.error ?? 'not started') ?? 0) + 1);
  const paint = painter(options.color);
  return [...byReason].map(([reason, n]) => `${paint('yellow', '·')} ${n} change${n === 1 ? '' : 's'} ${safeText(reason)}`);
}

/** The blank line and `Apply: 3 applied, 0 failed, 0 skipped.` that end an apply (`, 9 not started` after a stop). */
export function applySummary(results: readonly ChangeResult[]): string {
  const applied = results.filter((r) => r.status === 'applied').length;
  const failed = results.filter((r) => r.status === 'failed').length;
  const notStarted = results.filter((r) => r.notStarted === true).length;
  const skipped = results.filter((r) => r.status === 'skipped').length - notStarted;
  return `\nApply: ${applied} applied, ${failed} failed, ${skipped} skipped${notStarted > 0 ? `, ${notStarted} not started` : ''}.\n`;
}

type Color = 'green' | 'yellow' | 'red' | 'bold';
type Paint = (color: Color, text: string) => string;
const codes: Record<Color, [number, number]> = { green: [32, 39], yellow: [33, 39], red: [31, 39], bold: [1, 22] };

function painter(enabled: boolean): Paint {
  return (color, text) => (enabled ? `\u001b[${codes[color][0]}m${text}\u001b[${codes[color][1]}m` : text);
}
