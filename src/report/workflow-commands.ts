import type { Diagnostic, Plan } from '../model/index.js';

/**
 * GitHub Actions workflow commands (`::error file=…,line=…,col=…::message`): with
 * GITHUB_ACTIONS=true, each file diagnostic and each plan problem shows on the pull request's
 * diff at its line. The CLI writes them to stderr (the runner reads commands there too), so
 * stdout keeps only the plan or the JSON document.
 */
export function diagnosticCommands(diagnostics: readonly Diagnostic[]): string[] {
  return diagnostics.map((d) => {
    const where: Record<string, string> = d.position ? { file: d.position.file, line: String(d.position.line), col: String(d.position.col) } : {};
    return workflowCommand(d.severity === 'error' ? 'error' : 'warning', where, `${d.message}${d.path ? ` (${d.path})` : ''}`);
  });
}

/** Declared items the planner could not decide on, at their place in the file. */
export function planProblemCommands(plan: Plan): string[] {
  return plan.problems.map((p) => {
    const where: Record<string, string> = p.source ? { file: p.source.file, line: String(p.source.line), col: String(p.source.col) } : {};
    return workflowCommand('error', where, `${p.kind} ${JSON.stringify(p.key)}: ${p.message}`);
  });
}

/**
 * `::NAME k=v,k=v::message`, escaped as the Actions toolkit does (@actions/core command.ts):
 * in the message `%`, CR and LF; in property values also `:` and `,`.
 */
export function workflowCommand(name: 'error' | 'warning', properties: Readonly<Record<string, string>>, message: string): string {
  const props = Object.entries(properties)
    .map(([k, v]) => `${k}=${escapeProperty(v)}`)
    .join(',');
  return `::${name}${props === '' ? '' : ` ${props}`}::${escapeData(message)}`;
}

function escapeData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}
