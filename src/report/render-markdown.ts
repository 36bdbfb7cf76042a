import { approvalHint, type ApprovalStatus, type Change, type ChangeResult } from '../model/index.js';
import { mdCode as code, mdText as text } from './markdown-escape.js';
import { positionText, type Report } from './report.js';
import { afterValue, renderField, unavailableOf } from './render-value.js';
import { summarize } from '../plan/index.js';

const icon = { create: '➕ create', update: '🔄 update', delete: '➖ delete' } as const;
const status = { applied: '✅ applied', failed: '❌ failed', skipped: '⏭️ skipped' } as const;

export interface MarkdownOptions {
  /**
   * Longest output, in characters: the tables and lists are cut to fit, each with an exact
   * count of what was left out. GitHub refuses a comment over 65,536. @default no bound
   */
  readonly maxChars?: number;
  /** The `--report` file, named where a cut table sends its reader for the rest. */
  readonly reportFile?: string;
}

/** Room kept for the lines that say what was cut (each well under 400 characters). */
const footerRoom = 2_000;

/**
 * A redacted summary for a pull request comment or GITHUB_STEP_SUMMARY. Every value that
 * came from a file or the service is escaped, so a name cannot inject Markdown or HTML.
 * With maxChars, the sections are kept in order of importance (heading, summary, problems,
 * changes, results, unmanaged, protected) and cut where the room ends.
 */
export function renderMarkdown(report: Report, options: MarkdownOptions = {}): string {
  const { plan } = report;
  const s = summarize(plan);
  const title = `amsync ${report.command ?? (report.dryRun ? 'plan' : 'sync')}`;
  const out = new Budget(options.maxChars === undefined ? Number.POSITIVE_INFINITY : options.maxChars - footerRoom);
  const target = report.file ? ` for \`${code(report.file)}\`` : '';
  out.push(`### ${title}${target}`, '');
  if (report.planFile !== undefined) {
    const planFile = `\`${code(report.planFile)}\``;
    out.push(report.dryRun ? `Saved as ${planFile}: \`amsync apply\` applies exactly these changes, and refuses if the file or the service changed first.` : `Applied from the saved plan ${planFile}, exactly as reviewed.`, '');
  }
  if (plan.changes.length === 0) {
    out.push(`**No changes.** ${s.unchanged} unchanged, ${s.unmanaged} unmanaged.`);
  } else {
    out.push(`**${s.create} to create, ${s.update} to update, ${s.delete} to delete**${s.expired === undefined ? '' : ` (${s.expired} expired)`}, ${s.unchanged} unchanged, ${s.unmanaged} unmanaged.`);
  }
  const rest = whereTheRestIs(report, options);
  out.items(plan.problems, (p) => ['', '> [!CAUTION]', `> ${p.kind} \`${code(p.key)}\`: ${text(p.message)}`], (n) => ['', `> [!CAUTION]`, `> … and ${count(n)} more declared items could not be planned; ${rest}.`]);
  for (const n of plan.notes) out.push('', `> [!NOTE]`, `> ${text(n)}`);
  if (plan.ignored) {
    const what = plan.ignored.map((i) => `${i.kind} ${i.field} (${i.keys === 'all' ? `every ${i.kind}` : i.keys.map((k) => `\`${code(k)}\``).join(', ')})`).join('; ');
    out.push('', '> [!NOTE]', `> Ignored fields (sent on create, never updated, not drift): ${what}`);
  }
  const approval = report.approval;
  const gates = new Map((approval?.review.gates ?? []).map((g) => [g.index, g]));
  const approved = new Set(approval?.approved ?? []);
  if (approval && gates.size > 0) {
    const pending = approval.review.gates.filter((g) => !approved.has(g.index)).length;
    const rules = [...new Set(approval.review.gates.flatMap((g) => g.rules))].join(', ');
    out.push('', '> [!IMPORTANT]');
    if (pending === 0) out.push(`> ${count(gates.size)} change${gates.size === 1 ? '' : 's'} escalating privilege (${rules}) ${gates.size === 1 ? 'is' : 'are'} approved.`);
    else {
      out.push(
        `> **${count(gates.size)} change${gates.size === 1 ? '' : 's'} escalate${gates.size === 1 ? 's' : ''} privilege (${rules}) and need${gates.size === 1 ? 's' : ''} approval**: marked 🔐 below.`,
        `> ${report.planFile !== undefined && report.dryRun ? 'Approving this saved plan approves them; or ' : ''}${approveWith(approval)}.`,
      );
    }
  }
  for (const w of approval?.review.warnings ?? []) out.push('', '> [!WARNING]', `> policy ${text(w.rule)}: ${text(w.message)}`);
  if (plan.changes.length > 0) {
    const columns = ['action', 'kind', 'key', 'id', ...(report.sources ? ['source'] : []), ...(gates.size > 0 ? ['approval'] : []), 'fields'];
    out.push('', `| ${columns.join(' | ')} |`, `|${columns.map(() => '---').join('|')}|`);
    const extra = (c: Change, i: number): string[] => [
      ...(report.sources ? [c.source ? `\`${code(positionText(c.source))}\`` : ''] : []),
      ...(gates.size > 0 ? [approvalCell(gates.get(i), approved.has(i), approval!.withheld.includes(i))] : []),
    ];
    let i = 0;
    const unavailable = unavailableOf(plan);
    out.items(plan.changes, (c) => [changeRow(c, report.roleNames, extra(c, i++), unavailable)], (n) => ['', `**${count(n)} of ${count(plan.changes.length)} changes are not shown** to keep this summary under GitHub's size limit; ${rest}.`]);
  }
  if (report.results && report.results.length > 0) {
    // What a stop kept from being sent is counted under the table, not given a row each.
    const sent = report.results.filter((r) => r.notStarted !== true);
    if (sent.length > 0) {
      out.push('', '| result | kind | key | action | detail |', '|---|---|---|---|---|');
      out.items(sent, (r) => [resultRow(r)], (n) => ['', `**${count(n)} of ${count(sent.length)} results are not shown**; ${rest}.`]);
    }
    for (const [reason, n] of notStartedByReason(report.results)) out.push('', `⏭️ **${count(n)} change${n === 1 ? '' : 's'}** ${text(reason)}`);
  }
  if (plan.observed) {
    const n = plan.observed.length;
    out.push('', `<details><summary>${count(n)} observed item${n === 1 ? '' : 's'} drifted (mode: observe: reported, not written)</summary>`, '', '| would | kind | key | id | fields |', '|---|---|---|---|---|');
    out.items(plan.observed, (c) => [changeRow(c, report.roleNames)], (m) => [`- … and ${count(m)} more; ${rest}`]);
    out.push('', '</details>');
  }
  if (plan.expiries) {
    const n = plan.expiries.length;
    out.push('', `<details><summary>${count(n)} item${n === 1 ? '' : 's'} with an expiry ahead</summary>`, '', '| kind | key | id | expiresAt |', '|---|---|---|---|');
    out.items(plan.expiries, (e) => [`| ${e.kind} | \`${code(e.key)}\` | ${e.id ?? 'new'} | ${e.expiresAt} |`], (m) => [`- … and ${count(m)} more; ${rest}`]);
    out.push('', '</details>');
  }
  itemList(out, plan.unmanaged, 'unmanaged (not in the file, not pruned)', rest);
  itemList(out, plan.protected, 'protected (left alone by a protect glob)', rest);
  return `${out.lines.join('\n')}\n`;
}

function itemList(out: Budget, items: Report['plan']['unmanaged'], what: string, rest: string): void {
  if (items.length === 0) return;
  out.push('', `<details><summary>${count(items.length)} ${what}</summary>`, '');
  out.items(items, (i) => [`- ${i.kind} \`${code(i.key)}\` (id ${i.id})`], (n) => [`- … and ${count(n)} more; ${rest}`]);
  out.push('', '</details>');
}

/** The saved plan and the report hold every item; without either, how to get them. */
function whereTheRestIs(report: Report, options: MarkdownOptions): string {
  const where = [
    report.planFile !== undefined ? `the saved plan \`${code(report.planFile)}\`` : '',
    options.reportFile !== undefined ? `the report \`${code(options.reportFile)}\`` : '',
  ].filter(Boolean);
  return where.length > 0 ? `every one is in ${where.join(' and in ')}` : 'run `amsync plan --json` (or add `--report FILE`) for every one';
}

/** Lines within a character budget; once an item does not fit, the rest are counted instead. */
class Budget {
  readonly lines: string[] = [];
  #used = 0;
  #full = false;

  constructor(readonly room: number) {}

  push(...lines: string[]): void {
    for (const line of lines) {
      this.lines.push(line);
      this.#used += line.length + 1;
    }
  }

  items<T>(items: readonly T[], render: (item: T) => string[], omitted: (n: number) => string[]): void {
    let shown = 0;
    for (const item of items) {
      const lines = render(item);
      const size = lines.reduce((n, l) => n + l.length + 1, 0);
      if (this.#full || this.#used + size > this.room) break;
      this.push(...lines);
      shown += 1;
    }
    if (shown < items.length) {
      this.#full = true;
      // Footers go past the room: footerRoom keeps space for them.
      for (const line of omitted(items.length - shown)) {
        this.lines.push(line);
        this.#used += line.length + 1;
      }
    }
  }
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** The set hash while none of the set is approved; after that, the pending changes' own hashes (see approvalHint). */
function approveWith(status: ApprovalStatus): string {
  const hint = approvalHint(status);
  if (hint.setHash) return `approve them all with \`${hint.flags}\`, or each by its own hash`;
  return `approve ${hint.hashes.length === 1 ? 'the one' : `the ${hint.hashes.length}`} not approved with \`${hint.flags}\``;
}

function approvalCell(gate: { hash: string; rules: readonly string[] } | undefined, approved: boolean, withheld: boolean): string {
  if (gate) return `${approved ? '✅ approved' : '🔐 needs approval'} \`${gate.hash}\` (${gate.rules.join(', ')})`;
  return withheld ? 'waits for an approval' : '';
}

function changeRow(c: Change, roleNames: ReadonlyMap<number, string> | undefined, extra: readonly string[] = [], unavailable: ReadonlySet<string> = new Set()): string {
  const fields = Object.entries(c.fields)
    .map(([name, f]) => {
      const show = (value: unknown) => renderField(name, value, roleNames);
      const after = afterValue(c, name, f.after, unavailable);
      if (c.action === 'create') return `${name}: ${show(after)}`;
      if (c.action === 'delete') return `${name}: ${show(f.before)}`;
      return `${name}: ${show(f.before)} → ${show(after)}`;
    })
    .map((f) => `\`${code(f)}\``)
    .join('<br>');
  const id = c.id ?? (c.replaces === undefined ? '' : `-/+ replaces ${c.replaces}`);
  const renamed = c.renamedFrom === undefined ? '' : ` (renamed from \`${code(c.renamedFrom)}\`)`;
  return `| ${icon[c.action]} | ${c.kind} | \`${code(c.key)}\`${renamed} | ${id} | ${extra.map((e) => `${e} | `).join('')}${fields} |`;
}

function notStartedByReason(results: readonly ChangeResult[]): Map<string, number> {
  const byReason = new Map<string, number>();
  for (const r of results) if (r.notStarted === true) byReason.set(r.error ?? 'not started', (byReason.get(r.error ?? 'not started') ?? 0) + 1);
  return byReason;
}

function resultRow(r: ChangeResult): string {
  const replacement = r.replaces !== undefined ? `id ${r.id ?? '?'}, replaces id ${r.replaces}` : r.replacedBy !== undefined ? `replaced by id ${r.replacedBy}` : undefined;
  const detail = [replacement, r.error, r.drift ? `drift: ${r.drift}` : undefined, r.approval ? `approved: ${r.approval}` : undefined].filter(Boolean).map((t) => text(t!)).join('; ');
  return `| ${status[r.status]} | ${r.kind} | \`${code(r.key)}\` | ${r.action} | ${detail} |`;
}
