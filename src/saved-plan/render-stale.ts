import { mdCode, mdText, renderValue } from '../report/index.js';
import { describeServiceChange, type ServiceChange } from './state-diff.js';

/** Why a saved plan was not applied: the desired file or the service moved since it was made. */
export type Staleness =
  | { readonly reason: 'desired_file'; readonly desiredFile: string }
  | { readonly reason: 'service'; readonly changes: readonly ServiceChange[] };

/** Lines listed in a message before "… and N more": a terminal, not a database dump. */
const maxListed = 20;

/** The refusal, for stderr: what moved, item by item, and what to do. */
export function staleMessage(planFile: string, staleness: Staleness): string {
  const again = `plan again (\`amsync plan --out ${planFile}\`), review it, and apply the new plan`;
  if (staleness.reason === 'desired_file') {
    return `the saved plan ${planFile} is stale: ${staleness.desiredFile} changed since the plan was made; nothing was written; ${again}`;
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
    lines.push(`\`${mdCode(staleness.desiredFile)}\` changed since ${plan} was made. **Nothing was written.** Plan again and review the new plan.`);
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
