import type { Diagnostic, Plan } from '../model/index.js';
import { diagnosticCommands, planProblemCommands } from '../report/index.js';
import type { CliIo } from './io.js';

type Annotated = Pick<CliIo, 'env' | 'stderr'>;

/** On GitHub Actions, each file diagnostic as a workflow command on stderr (report/workflow-commands.ts). */
export function annotateDiagnostics(io: Annotated, diagnostics: readonly Diagnostic[]): void {
  if (io.env.GITHUB_ACTIONS === 'true') for (const line of diagnosticCommands(diagnostics)) io.stderr.write(`${line}\n`);
}

/** On GitHub Actions, each plan problem as a workflow command on stderr. */
export function annotatePlan(io: Annotated, plan: Plan): void {
  if (io.env.GITHUB_ACTIONS === 'true') for (const line of planProblemCommands(plan)) io.stderr.write(`${line}\n`);
}
