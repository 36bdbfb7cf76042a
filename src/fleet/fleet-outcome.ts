import { AmsyncError, ChangesFailedError, exitCodes, SafetyError } from '../errors.js';
import type { ChangeResult, Plan } from '../model/index.js';

/**
 * How one target's part of a fleet run ended:
 * - `changed`: a plan with changes (a dry-run), or changes applied, all of them;
 * - `unchanged`: nothing to do;
 * - `failed`: the service or network failed, an item could not be planned, a change or a
 *   token file failed (exit 1 for a target of its own);
 * - `refused`: a safety guard refused its plan and nothing was written there (exit 3);
 * - `skipped`: not run, or not applied, because of something outside it (an interrupt; a
 *   saved fleet plan refused as a whole because another target went stale).
 */
export type TargetStatus = 'changed' | 'unchanged' | 'failed' | 'refused' | 'skipped';

/** Why a target failed, was refused or skipped: the error's stable code and its one line. */
export interface TargetError {
  readonly code: string;
  readonly message: string;
}

/** One target's outcome, as renderers and the exit code see it. */
export interface TargetOutcome {
  readonly name: string;
  readonly url: string;
  readonly status: TargetStatus;
  /** The plan, when one was made (a failed listing has none). */
  readonly plan?: Plan;
  /** Present when something was applied. */
  readonly results?: readonly ChangeResult[];
  readonly roleNames?: ReadonlyMap<number, string>;
  /** Set for failed, refused and skipped. */
  readonly error?: TargetError;
  /** Lines for stderr beside its report (token files that could not be written...). */
  readonly notes?: readonly string[];
}

export interface FleetSummary {
  readonly targets: number;
  readonly changed: number;
  readonly failed: number;
  readonly refused: number;
  readonly skipped: number;
  readonly unchanged: number;
}

export function summarizeFleet(outcomes: readonly TargetOutcome[]): FleetSummary {
  const count = (status: TargetStatus) => outcomes.filter((o) => o.status === status).length;
  return { targets: outcomes.length, changed: count('changed'), failed: count('failed'), refused: count('refused'), skipped: count('skipped'), unchanged: count('unchanged') };
}

/**
 * The fleet's exit code (DESIGN.md §9): 1 if any target failed, else 3 if any was refused by
 * a guard (a stale target of a saved fleet plan included), else 2 with `--detailed-exitcode`
 * when a dry-run found changes, else 0. Skipped targets alone do not fail a run: they are
 * skipped because of a failure or refusal counted elsewhere, or an interrupt (130/143). Pure.
 */
export function fleetExitCode(summary: FleetSummary, options: { readonly dryRun: boolean; readonly detailedExitcode?: boolean }): number {
  if (summary.failed > 0) return exitCodes.failure;
  if (summary.refused > 0) return exitCodes.refused;
  if (options.dryRun && options.detailedExitcode === true && summary.changed > 0) return exitCodes.changesPending;
  return exitCodes.ok;
}

/** A target's error as its outcome says it; a SafetyError is a refusal, anything else a failure. */
export function outcomeOfError(target: { readonly name: string; readonly url: string }, error: unknown, plan?: Plan): TargetOutcome {
  const refused = error instanceof SafetyError;
  return {
    name: target.name,
    url: target.url,
    status: refused ? 'refused' : 'failed',
    ...(plan === undefined ? {} : { plan }),
    error: errorOf(error),
  };
}

export function errorOf(error: unknown): TargetError {
  if (error instanceof AmsyncError) return { code: error.code, message: error.message };
  return { code: 'unexpected', message: error instanceof Error ? error.message : String(error) };
}

/** What a sync (or an apply) of one target comes to, by the rules `amsync sync` exits by. */
export interface TargetRunOutcome {
  readonly plan: Plan;
  readonly results?: readonly ChangeResult[];
  readonly roleNames?: ReadonlyMap<number, string>;
  readonly refusal?: SafetyError;
  readonly tokenErrors?: readonly { readonly key: string; readonly error: string }[];
  readonly stateSaveError?: unknown;
}

/**
 * One target's run -> its outcome, with the same rules `sync` turns a run into an exit code
 * by: a refusal is `refused`; declared items that could not be planned, changes that did not
 * apply, token files or the state file that could not be written are `failed`; else changes
 * make it `changed`.
 */
export function classifyRun(target: { readonly name: string; readonly url: string }, run: TargetRunOutcome, stateFile?: string): TargetOutcome {
  const base = { name: target.name, url: target.url, plan: run.plan, ...(run.results ? { results: run.results } : {}), ...(run.roleNames ? { roleNames: run.roleNames } : {}) };
  if (run.refusal) return { ...base, status: 'refused', error: errorOf(run.refusal) };
  const notes = (run.tokenErrors ?? []).map((t) => `error: apikey ${JSON.stringify(t.key)}: ${t.error}`);
  const failed = run.results?.filter((r) => r.status !== 'applied').length ?? 0;
  const withNotes = notes.length > 0 ? { notes } : {};
  if (run.plan.problems.length > 0) {
    const n = run.plan.problems.length;
    return { ...base, ...withNotes, status: 'failed', error: { code: 'plan_problems', message: `${n} declared item${n === 1 ? '' : 's'} could not be planned` } };
  }
  if (failed > 0) {
    const e = new ChangesFailedError(failed, `${failed} of ${run.results!.length} changes did not apply`);
    return { ...base, ...withNotes, status: 'failed', error: errorOf(e) };
  }
  if (notes.length > 0) return { ...base, ...withNotes, status: 'failed', error: { code: 'token_files', message: `${notes.length} token file${notes.length === 1 ? '' : 's'} could not be written` } };
  if (run.stateSaveError !== undefined) {
    const why = run.stateSaveError instanceof Error ? run.stateSaveError.message : String(run.stateSaveError);
    return { ...base, status: 'failed', error: { code: 'state_not_saved', message: `the state file ${stateFile ?? ''} could not be written (${why}): the changes were applied, but drift of the passwords they set cannot be detected until it is`.replace('file  could', 'file could') } };
  }
  return { ...base, status: run.plan.changes.length > 0 ? 'changed' : 'unchanged' };
}
