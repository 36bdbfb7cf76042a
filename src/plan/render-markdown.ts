import type { Change, ChangeResult } from '../model/index.js';
import { mdCode as code, mdText as text } from './markdown-escape.js';
import type { Report } from './report.js';
import { renderField } from './render-value.js';
import { summarize } from './summary.js';

const icon = { create: '➕ create', update: '🔄 update', delete: '➖ delete' } as const;
const status = { applied: '✅ applied', failed: '❌ failed', skipped: '⏭️ skipped' } as const;

/**
 * A redacted summary for a pull request comment or GITHUB_STEP_SUMMARY. Every value that
 * came from a file or the service is escaped, so a name cannot inject Markdown or HTML.
 */
export function renderMarkdown(report: Report): string {
  const { plan } = report;
  const s = summarize(plan);
  const title = `amsync ${report.command ?? (report.dryRun ? 'plan' : 'sync')}`;
  const lines: string[] = [];
  const target = report.file ? ` for \`${code(report.file)}\`` : '';
  lines.push(`### ${title}${target}`, '');
  if (report.planFile !== undefined) {
    const planFile = `\`${code(report.planFile)}\``;
    lines.push(report.dryRun ? `Saved as ${planFile}: \`amsync apply\` applies exactly these changes, and refuses if the file or the service changed first.` : `Applied from the saved plan ${planFile}, exactly as reviewed.`, '');
  }
  if (plan.changes.length === 0) {
    lines.push(`**No changes.** ${s.unchanged} unchanged, ${s.unmanaged} unmanaged.`);
  } else {
    lines.push(`**${s.create} to create, ${s.update} to update, ${s.delete} to delete**, ${s.unchanged} unchanged, ${s.unmanaged} unmanaged.`);
  }
  for (const p of plan.problems) lines.push('', `> [!CAUTION]`, `> ${p.kind} \`${code(p.key)}\`: ${text(p.message)}`);
  for (const n of plan.notes) lines.push('', `> [!NOTE]`, `> ${text(n)}`);
  if (plan.changes.length > 0) {
    lines.push('', '| action | kind | key | id | fields |', '|---|---|---|---|---|');
    for (const c of plan.changes) lines.push(changeRow(c, report.roleNames));
  }
  if (report.results && report.results.length > 0) {
    lines.push('', '| result | kind | key | action | detail |', '|---|---|---|---|---|');
    for (const r of report.results) lines.push(resultRow(r));
  }
  if (plan.unmanaged.length > 0) {
    lines.push('', `<details><summary>${plan.unmanaged.length} unmanaged (not in the file, not pruned)</summary>`, '');
    for (const u of plan.unmanaged) lines.push(`- ${u.kind} \`${code(u.key)}\` (id ${u.id})`);
    lines.push('', '</details>');
  }
  if (plan.protected.length > 0) {
    lines.push('', `<details><summary>${plan.protected.length} protected (left alone by a protect glob)</summary>`, '');
    for (const p of plan.protected) lines.push(`- ${p.kind} \`${code(p.key)}\` (id ${p.id})`);
    lines.push('', '</details>');
  }
  return `${lines.join('\n')}\n`;
}

function changeRow(c: Change, roleNames: ReadonlyMap<number, string> | undefined): string {
  const fields = Object.entries(c.fields)
    .map(([name, f]) => {
      const show = (value: unknown) => renderField(name, value, roleNames);
      if (c.action === 'create') return `${name}: ${show(f.after)}`;
      if (c.action === 'delete') return `${name}: ${show(f.before)}`;
      return `${name}: ${show(f.before)} → ${show(f.after)}`;
    })
    .map((f) => `\`${code(f)}\``)
    .join('<br>');
  return `| ${icon[c.action]} | ${c.kind} | \`${code(c.key)}\` | ${c.id ?? ''} | ${fields} |`;
}

function resultRow(r: ChangeResult): string {
  const detail = [r.error, r.drift ? `drift: ${r.drift}` : undefined].filter(Boolean).map((t) => text(t!)).join('; ');
  return `| ${status[r.status]} | ${r.kind} | \`${code(r.key)}\` | ${r.action} | ${detail} |`;
}
