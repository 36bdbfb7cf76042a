import { AmsyncError, ChangesFailedError, exitCodes, SafetyError } from '../errors.js';
import type { ChangeResult, Plan } from '../model/index.js';
import { fsProblem, isFsError, type LocalPath } from '../secrets/index.js';
import { settingOptions } from '../settings/index.js';

/**
 * How one target's part of a fleet run ended:
 * - `changed`: a plan with changes (a dry-run), or changes applied, all of them;
 * - `unchanged`: nothing to do;
 * - `failed`: the service or network failed, an item could not be planned, a change or a
 *   token file failed (exit 1 for a target of its own);
 * - `refused`: a safety guard refused its plan and nothing was written there (exit 3);
 * - `interrupted`: it was running when the interrupt came and nothing of it failed: the
 *   changes it sent are applied, those it never sent are not started (its results say which);
 * - `skipped`: not run, or not applied, because of something outside it (an interrupt before
 *   it started: nothing was sent to it; a saved fleet plan refused as a whole because another
 *   target went stale).
 */
export type TargetStatus = 'changed' | 'unchanged' | 'failed' | 'refused' | 'interrupted' | 'skipped';

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
  /** Present only when some target was interrupted mid-run (a report without one is unchanged). */
  readonly interrupted?: number;
}

export function summarizeFleet(outcomes: readonly TargetOutcome[]): FleetSummary {
  const count = (status: TargetStatus) => outcomes.filter((o) => o.status === status).length;
  const interrupted = count('interrupted');
  return {
    targets: outcomes.length,
    changed: count('changed'),
    failed: count('failed'),
    refused: count('refused'),
    skipped: count('skipped'),
    unchanged: count('unchanged'),
    ...(interrupted > 0 ? { interrupted } : {}),
  };
}

/**
 * The fleet's exit code (README, "Fleet: one access file, many services"): 1 if any target failed, else 3 if any was refused by
 * a guard (a stale target of a saved fleet plan included), else 2 with `--detailed-exitcode`
 * when a dry-run found changes, else 0. Skipped targets alone do not fail a run: they are
 * skipped because of a failure or refusal counted elsewhere, or an interrupt (130/143), as
 * interrupted ones are (the interrupt's exit code wins). Pure.
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
  /** The writer lock was lost mid-run: the changes after it were not started. */
  readonly lockLost?: Error;
}

/**
 * One target's run -> its outcome, with the same rules `sync` turns a run into an exit code
 * by: a refusal is `refused`; declared items that could not be planned, changes that did not
 * apply, token files or the state file that could not be written are `failed`; else changes
 * make it `changed`. Changes the interrupt kept from being sent (`notStarted`) are not
 * failures: with `interrupted` (the run's signal fired) and nothing failed, it is
 * `interrupted`, and its message counts what was applied and what was never sent.
 */
export function classifyRun(target: { readonly name: string; readonly url: string }, run: TargetRunOutcome, stateFile?: string | LocalPath, options: { readonly interrupted?: boolean } = {}): TargetOutcome {
  const base = { name: target.name, url: target.url, plan: run.plan, ...(run.results ? { results: run.results } : {}), ...(run.roleNames ? { roleNames: run.roleNames } : {}) };
  if (run.refusal) return { ...base, status: 'refused', error: errorOf(run.refusal) };
  const notes = (run.tokenErrors ?? []).map((t) => `error: apikey ${JSON.stringify(t.key)}: ${t.error}`);
  const results = run.results ?? [];
  const applied = results.filter((r) => r.status === 'applied').length;
  const notStarted = results.filter((r) => r.notStarted === true).length;
  const failed = results.length - applied - notStarted;
  // "; 3 applied, 17 not started (never sent)": what the rest of a stopped run came to.
  const rest = notStarted > 0 ? `; ${applied} applied, ${notStarted} not started (never sent)` : '';
  const withNotes = notes.length > 0 ? { notes } : {};
  if (run.plan.problems.length > 0) {
    const n = run.plan.problems.length;
    return { ...base, ...withNotes, status: 'failed', error: { code: 'plan_problems', message: `${n} declared item${n === 1 ? '' : 's'} could not be planned` } };
  }
  if (failed > 0) {
    const e = new ChangesFailedError(failed, `${failed} of ${results.length} changes did not apply${rest}`);
    return { ...base, ...withNotes, status: 'failed', error: errorOf(e) };
  }
  if (notes.length > 0) return { ...base, ...withNotes, status: 'failed', error: { code: 'token_files', message: `${notes.length} token file${notes.length === 1 ? '' : 's'} could not be written` } };
  if (run.stateSaveError !== undefined) return { ...base, status: 'failed', error: { code: 'state_not_saved', message: stateNotSaved(run.stateSaveError, target.name, stateFile) } };
  if (notStarted > 0 && options.interrupted === true && run.lockLost === undefined) {
    return { ...base, status: 'interrupted', error: { code: 'interrupted', message: `interrupted: ${applied} of ${results.length} changes applied, ${notStarted} not started (never sent)` } };
  }
  // Not started for another reason (the writer lock lost mid-run): that target failed, as `sync` exits 1.
  if (notStarted > 0) return { ...base, status: 'failed', error: run.lockLost ? errorOf(run.lockLost) : { code: 'changes_not_started', message: `${notStarted} of ${results.length} changes were not started (never sent); ${applied} applied` } };
  return { ...base, status: run.plan.changes.length > 0 ? 'changed' : 'unchanged' };
}

/**
 * A target's state file refused mid-run, as every local path's failure is said
 * (src/secrets/local-path-error.ts): its path, its setting, the errno in words and the fix
 * for that errno (a read-only volume needs another fix than a full disk), never Node's raw
 * message with its syscall.
 */
function stateNotSaved(error: unknown, target: string, stateFile: string | LocalPath | undefined): string {
  const path: LocalPath = typeof stateFile === 'object' ? stateFile : { what: 'the state file', path: stateFile ?? '', setting: `target ${target}'s own, beside ${stateFileSetting()}`, knob: '--state-file' };
  const cost = 'the changes were applied, but drift of the passwords they set cannot be detected until it is';
  // An AmsyncError (a lost writer lock, a record another run holds) says its own why and fix.
  if (!isFsError(error)) return `${path.what} ${path.path} could not be written (${path.setting}): ${error instanceof Error ? error.message : String(error)}: ${cost}`.replace(/ {2}/g, ' ');
  const { reason, fix } = fsProblem(error, path);
  return `${path.what} ${path.path} could not be written (${path.setting}): ${reason}: ${cost}; ${fix}, then run once with --rotate-passwords`;
}

/** `--state-file, AMSYNC_STATE_FILE, stateFile`, as the settings table has it. */
function stateFileSetting(): string {
  const option = settingOptions.find((o) => o.path.length === 1 && o.path[0] === 'stateFile');
  return [option?.flag, option?.env, 'stateFile'].filter((w) => w !== undefined).join(', ');
}
