import { mdCode, mdText, renderValue } from '../report/index.js';
import { describeServiceChange, type ServiceChange } from './state-diff.js';

/** Why a saved plan was not applied: the desired file or the service moved since it was made. */
export type Staleness =
  | { readonly reason: 'desired_file'; readonly desiredFile: string; readonly files?: readonly DesiredFileChange[] }
  | { readonly reason: 'service'; readonly changes: readonly ServiceChange[] };

/** One of several desired files that differs from the plan's: edited, added or removed since. */
export interface DesiredFileChange {
  readonly file: string;
  readonly change: 'changed' | 'added' | 'removed';
}

/** The files that differ between two lists of (file, hash). */
export function desiredFileChanges(before: readonly { file: string; hash: string }[], after: readonly { file: string; hash: string }[]): DesiredFileChange[] {
  const was = new Map(before.map((f) => [f.file, f.hash]));
  const now = new Map(after.map((f) => [f.file, f.hash]));
  const out: DesiredFileChange[] = [];
  for (const [file, hash] of was) {
    if (!now.has(file)) out.push({ file, change: 'removed' });
    else if (now.get(file) !== hash) out.push({ file, change: 'changed' });
  }
  for (const file of now.keys()) if (!was.has(file)) out.push({ file, change: 'added' });
  return out;
}

/** `teams/ops.yaml changed, teams/new.yaml added`; empty when the list says nothing (the order changed). */
function describeFiles(files: readonly DesiredFileChange[] | undefined): string {
  if (!files || files.length === 0) return '';
  const shown = files.slice(0, maxListed).map((f) => `${f.file} ${f.change === 'changed' ? 'changed' : f.change === 'added' ? 'was added' : 'was removed'}`);
  return `${shown.join(', ')}${files.length > maxListed ? `, … and ${files.length - maxListed} more` : ''}`;
}

/** Lines listed in a message before "… and N more": a terminal, not a database dump. */
const maxListed = 20;

/** The refusal, for stderr: what moved, item by item, and what to do. */
export function staleMessage(planFile: string, staleness: Staleness): string {
  const again = `plan again (\`amsync plan --out ${planFile}\`), review it, and apply the new plan`;
  if (staleness.reason === 'desired_file') {
    const files = describeFiles(staleness.files);
    return `the saved plan ${planFile} is stale: ${files === '' ? `${staleness.desiredFile} changed` : `of ${staleness.desiredFile}, ${files}`} since the plan was made; nothing was written; ${again}`;
  }
  const { changes } = staleness;
  if (changes.length === 0) {
    // The fingerprint moved but no item did: the listing was read differently (another amsync?).
    return `the saved plan ${planFile} is stale: the service's listing no longer matches the plan's fingerprint; nothing was written; ${again}`;
  }
  const lines = changes.slice(0, maxListed).map((c) => `  - ${describeServiceChange(c)}`);
  if (changes.length > maxListed) lines.push(`  - … and ${changes.length - maxListed} more`);
  const n = changes.length;
  return [
    `the saved plan ${planFile} is stale: the service changed since the plan was made (${n} item${n === 1 ? '' : 's'}); nothing was written:`,
    ...lines,
    `To go on, ${again}.`,
  ].join('\n');
}

/** The refusal as Markdown, for GITHUB_STEP_SUMMARY: the reviewer sees why the merge did not apply. */
export function renderStaleMarkdown(planFile: string, staleness: Staleness): string {
  const lines = ['### amsync apply: refused, the saved plan is stale', ''];
  const plan = `\`${mdCode(planFile)}\``;
  if (staleness.reason === 'desired_file') {
    const files = describeFiles(staleness.files);
    const what = files === '' ? `\`${mdCode(staleness.desiredFile)}\` changed` : mdText(files);
    lines.push(`${what} since ${plan} was made. **Nothing was written.** Plan again and review the new plan.`);
    return `${lines.join('\n')}\n`;
  }
  const { changes } = staleness;
  lines.push(`The service changed since ${plan} was made (${changes.length} item${changes.length === 1 ? '' : 's'}). **Nothing was written.** Plan again and review the new plan.`, '');
  lines.push('| kind | key | id | what changed |', '|---|---|---|---|');
  for (const c of changes.slice(0, 200)) {
    const what =
      c.change === 'changed'
        ? Object.entries(c.fields)
            .map(([name, f]) => `\`${mdCode(`${name}: ${renderValue(f.before)} → ${renderValue(f.after)}`)}\``)
            .join('<br>')
        : mdText(c.change);
    lines.push(`| ${c.kind} | \`${mdCode(c.key)}\` | ${c.id} | ${what} |`);
  }
  if (changes.length > 200) lines.push('', mdText(`… and ${changes.length - 200} more.`));
  return `${lines.join('\n')}\n`;
}
