import { mdCode, mdText, renderMarkdown, renderText, toJsonDocument, type Report } from '../report/index.js';
import { escapeControls, jsonSafe } from '../text/index.js';
import type { FleetSummary, TargetOutcome } from './fleet-outcome.js';
import { summarizeFleet } from './fleet-outcome.js';

/** What a fleet report is about: the command and whether anything was applied. */
export interface FleetReportContext {
  /** `plan` (a dry-run), `sync` or `apply` (a saved fleet plan). */
  readonly command: 'plan' | 'sync' | 'apply';
  readonly dryRun: boolean;
  /** The desired file, for headings. */
  readonly file?: string;
  /** The saved fleet plan written (`--out`) or applied. */
  readonly planFile?: string;
}

/** A target's Report, for the single-target renderers; undefined when it has no plan. */
export function targetReport(outcome: TargetOutcome, context: FleetReportContext): Report | undefined {
  if (outcome.plan === undefined) return undefined;
  return {
    plan: outcome.plan,
    // A refused plan was not applied, whatever the command.
    dryRun: context.dryRun || outcome.status === 'refused' || outcome.results === undefined,
    ...(outcome.results ? { results: outcome.results } : {}),
    ...(context.file === undefined ? {} : { file: context.file }),
    command: context.command,
    ...(outcome.roleNames ? { roleNames: outcome.roleNames } : {}),
  };
}

/** `== target sp-1 (https://…) ==`: the line every section of the text output starts with. */
export function targetHeader(outcome: Pick<TargetOutcome, 'name' | 'url'>): string {
  return `== target ${outcome.name} (${safe(outcome.url)}) ==`;
}

/**
 * One target's section of the text output: its header, its plan and results as `amsync plan`
 * or `sync` prints them, and why it failed, was refused or skipped.
 */
export function renderTargetText(outcome: TargetOutcome, context: FleetReportContext, options: { readonly color: boolean }): string {
  // Counted in one line before the summary (notStartedTargetsLine), not a section each.
  if (interruptedBeforeStart(outcome)) return '';
  const lines = [targetHeader(outcome)];
  const report = targetReport(outcome, context);
  let body = report === undefined ? '' : renderText(report, { color: options.color });
  if (report !== undefined && body.endsWith('\n')) body = body.slice(0, -1);
  if (body !== '') lines.push(body);
  for (const note of outcome.notes ?? []) lines.push(safe(note));
  if (outcome.error) {
    // An interrupted target's message starts `interrupted…`: it says what happened, not an error.
    const word = outcome.status === 'refused' ? 'refused: ' : outcome.status === 'skipped' ? 'skipped: ' : outcome.status === 'interrupted' ? '' : 'error: ';
    lines.push(`${word}${safe(outcome.error.message)}`);
  }
  return `${lines.join('\n')}\n\n`;
}

/** A target the interrupt kept from starting: it sent nothing. */
function interruptedBeforeStart(outcome: TargetOutcome): boolean {
  return outcome.status === 'skipped' && outcome.error?.code === 'interrupted';
}

/**
 * `· 57 targets not started: the run was interrupted`: the targets an interrupt kept from
 * starting (nothing was sent to them), as a count — a section each would bury the targets that
 * ran. Empty when there are none.
 */
export function notStartedTargetsLine(outcomes: readonly TargetOutcome[]): string {
  const unstarted = outcomes.filter(interruptedBeforeStart);
  if (unstarted.length === 0) return '';
  const why = unstarted[0]!.error!.message.replace(/^not started: /, '');
  return `· ${unstarted.length} target${unstarted.length === 1 ? '' : 's'} not started: ${safe(why)}\n\n`;
}

/** `Fleet: 12 targets — 3 with changes, 1 failed, 1 interrupted, 7 unchanged`: counts that are not 0. */
export function fleetSummaryLine(summary: FleetSummary): string {
  const parts = [
    summary.changed > 0 ? `${summary.changed} with changes` : '',
    summary.failed > 0 ? `${summary.failed} failed` : '',
    summary.refused > 0 ? `${summary.refused} refused` : '',
    (summary.interrupted ?? 0) > 0 ? `${summary.interrupted} interrupted` : '',
    summary.skipped > 0 ? `${summary.skipped} skipped` : '',
    summary.unchanged > 0 ? `${summary.unchanged} unchanged` : '',
  ].filter(Boolean);
  return `Fleet: ${summary.targets} target${summary.targets === 1 ? '' : 's'} — ${parts.join(', ')}\n`;
}

/**
 * `--json`: `{formatVersion, fleet: true, dryRun, summary: {targets, changed, failed, refused,
 * skipped, unchanged}, targets: [{name, url, status, summary, changes, unmanaged, results,
 * error}]}`. Each target carries what the single-target document has (`problems`, `protected`,
 * `notes`, `roleNames` when there are some; `results` when something was applied); `summary`
 * is null, and the lists empty, for a target that was never planned. `error` is null or
 * `{code, message}`. `status` is `interrupted` for a target that was running at an interrupt
 * and had nothing fail (its results say what was applied and what was `notStarted`); the
 * summary counts those as `interrupted` only when there are some.
 */
export function toFleetJsonDocument(outcomes: readonly TargetOutcome[], context: FleetReportContext): Record<string, unknown> {
  return {
    formatVersion: 1,
    fleet: true,
    dryRun: context.dryRun,
    summary: summarizeFleet(outcomes),
    targets: outcomes.map((o) => {
      const report = targetReport(o, context);
      const doc = report === undefined ? { summary: null, changes: [], unmanaged: [] } : withoutHead(toJsonDocument(report));
      return { name: o.name, url: o.url, status: o.status, ...doc, error: o.error ? { code: o.error.code, message: o.error.message } : null };
    }),
  };
}

function withoutHead(doc: Record<string, unknown>): Record<string, unknown> {
  const { formatVersion: _v, dryRun: _d, ...rest } = doc;
  return rest;
}

export function renderFleetJson(outcomes: readonly TargetOutcome[], context: FleetReportContext): string {
  return `${jsonSafe(JSON.stringify(toFleetJsonDocument(outcomes, context), null, 2))}\n`;
}

const statusWords = { changed: '🔄 changes', unchanged: '✅ unchanged', failed: '❌ failed', refused: '⛔ refused', interrupted: '⏸️ interrupted', skipped: '⏭️ skipped' } as const;

/** Room kept for the lines that say what was cut. */
const footerRoom = 2_000;
/** A target's details are shown only with at least this much room left (a table row and some changes). */
const minDetailRoom = 1_500;

/**
 * A redacted summary for a pull request comment, within `maxChars` (GitHub refuses a comment
 * over 65,536): the fleet's counts, one table row per target (cut, with the exact count left
 * out, when the room ends), then each target with changes or a problem in a collapsed section
 * — its single-target summary, cut by the same rule to the room left.
 */
export function renderFleetMarkdown(outcomes: readonly TargetOutcome[], context: FleetReportContext, options: { readonly maxChars?: number; readonly reportFile?: string } = {}): string {
  const summary = summarizeFleet(outcomes);
  const room = (options.maxChars ?? Number.POSITIVE_INFINITY) - footerRoom;
  const lines: string[] = [];
  let used = 0;
  const push = (...more: string[]) => {
    for (const l of more) {
      lines.push(l);
      used += l.length + 1;
    }
  };
  const rest = options.reportFile !== undefined ? `every one is in the report \`${mdCode(options.reportFile)}\`` : 'run with `--json` (or add `--report FILE`) for every one';
  const title = `amsync ${context.command}${context.file ? ` for \`${mdCode(context.file)}\`` : ''}: fleet of ${summary.targets} target${summary.targets === 1 ? '' : 's'}`;
  push(`### ${title}`, '', `**${mdText(fleetSummaryLine(summary).trim())}**`, '');
  if (context.planFile !== undefined) {
    push(context.dryRun ? `Saved as \`${mdCode(context.planFile)}\`: \`amsync apply\` applies exactly these changes, and refuses if the file or any target changed first.` : `Applied from the saved fleet plan \`${mdCode(context.planFile)}\`.`, '');
  }
  push('| target | status | create | update | delete | unchanged | unmanaged | detail |', '|---|---|---|---|---|---|---|---|');
  let shown = 0;
  for (const o of outcomes) {
    const row = tableRow(o);
    if (used + row.length + 1 > room) break;
    push(row);
    shown += 1;
  }
  if (shown < outcomes.length) {
    push('', `**${count(outcomes.length - shown)} of ${count(outcomes.length)} targets are not shown** to keep this summary under GitHub's size limit; ${rest}.`);
    return `${lines.join('\n')}\n`;
  }
  const detailed = outcomes.filter((o) => o.plan !== undefined && (o.plan.changes.length > 0 || o.plan.problems.length > 0 || (o.results?.length ?? 0) > 0));
  let left = detailed.length;
  for (const o of detailed) {
    const share = Math.floor((room - used) / left);
    if (share < minDetailRoom) break;
    const body = renderMarkdown(targetReport(o, context)!, { maxChars: share, ...(options.reportFile === undefined ? {} : { reportFile: options.reportFile }) });
    push('', `<details><summary>target <code>${mdText(o.name)}</code>: ${statusWords[o.status]}</summary>`, '', body.trimEnd(), '', '</details>');
    left -= 1;
  }
  if (left > 0) push('', `The changes of ${count(left)} more target${left === 1 ? '' : 's'} are not shown to keep this summary under GitHub's size limit; ${rest}.`);
  return `${lines.join('\n')}\n`;
}

function tableRow(o: TargetOutcome): string {
  const s = o.plan
    ? {
        create: o.plan.changes.filter((c) => c.action === 'create').length,
        update: o.plan.changes.filter((c) => c.action === 'update').length,
        delete: o.plan.changes.filter((c) => c.action === 'delete').length,
        unchanged: o.plan.unchanged,
        unmanaged: o.plan.unmanaged.length,
      }
    : undefined;
  const cell = (n: number | undefined) => (n === undefined ? '' : String(n));
  const detail = o.error ? mdText(o.error.message.length > 300 ? `${o.error.message.slice(0, 300)}…` : o.error.message) : '';
  return `| \`${mdCode(o.name)}\` | ${statusWords[o.status]} | ${cell(s?.create)} | ${cell(s?.update)} | ${cell(s?.delete)} | ${cell(s?.unchanged)} | ${cell(s?.unmanaged)} | ${detail} |`;
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** Outside text (a message quoting the service): control and bidi characters escaped. */
function safe(text: string): string {
  return escapeControls(text, { keepNewlines: true });
}
