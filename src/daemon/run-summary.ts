import type { SyncOutcome } from '../sync/index.js';
import type { Kind } from '../model/index.js';
import type { RunOutcome } from '../obs/index.js';

export interface RunSummary {
  readonly outcome: RunOutcome;
  /** Changes planned at the start of the run, by kind: how far the service had drifted. */
  readonly drift: Readonly<Record<Kind, number>>;
  readonly unmanaged: Readonly<Record<Kind, number>>;
  readonly planned: { readonly create: number; readonly update: number; readonly delete: number };
  readonly applied: number;
  readonly failed: number;
  readonly skipped: number;
  /** Declared items the planner could not decide on (ambiguous names, missing passwords...). */
  readonly problems: number;
  /** Declared keys whose token file could not be written. */
  readonly tokenErrors: number;
}

export interface SummaryContext {
  /** The plan was made from the current file (false: from the last good one, the file being invalid). */
  readonly inputValid: boolean;
  readonly mode: 'apply' | 'observe';
}

/**
 * One sync's outcome as the daemon counts it. Pure.
 * - invalid input wins: whatever the plan said, nothing was applied on purpose;
 * - observe mode only plans, so a refusal or a problem is drift to report, not a failure;
 * - in apply mode a refusal is `refused`; failed or skipped changes, undecidable items, or token
 *   files that could not be written, `partial`.
 */
export function summariseSync(sync: SyncOutcome, context: SummaryContext): RunSummary {
  const drift: Record<Kind, number> = { sshUser: 0, apikey: 0 };
  const planned = { create: 0, update: 0, delete: 0 };
  for (const change of sync.plan.changes) {
    drift[change.kind] += 1;
    planned[change.action] += 1;
  }
  // Observed items' drift is drift too (metrics, notifications), though never planned.
  for (const change of sync.plan.observed ?? []) drift[change.kind] += 1;
  const unmanaged: Record<Kind, number> = { sshUser: 0, apikey: 0 };
  for (const item of sync.plan.unmanaged) unmanaged[item.kind] += 1;
  const results = sync.results ?? [];
  const count = (status: string) => results.filter((r) => r.status === status).length;
  const failed = count('failed');
  // Skipped: waited for a change that failed. Not converged either.
  const skipped = count('skipped');
  const problems = sync.plan.problems.length;
  const tokenErrors = sync.tokenErrors?.length ?? 0;
  let outcome: RunOutcome = 'success';
  if (!context.inputValid) outcome = 'invalid_input';
  else if (context.mode === 'apply' && sync.refusal) outcome = 'refused';
  else if (context.mode === 'apply' && (failed > 0 || skipped > 0 || problems > 0 || tokenErrors > 0)) outcome = 'partial';
  return { outcome, drift, unmanaged, planned, applied: count('applied'), failed, skipped, problems, tokenErrors };
}
