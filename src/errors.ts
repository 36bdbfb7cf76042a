import type { Diagnostic } from './model/index.js';

/**
 * Every error amsync raises on purpose. `code` is stable and is what callers branch on;
 * the message is for people. The CLI entry maps classes to exit codes (README, "Exit codes").
 */
export class AmsyncError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AmsyncError';
    this.code = code;
  }
}

/** A bad command line: unknown flag, bad value, conflicting flags. Exit 64. */
export class UsageError extends AmsyncError {
  constructor(message: string, code = 'usage', options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'UsageError';
  }
}

/** The desired-state or settings file is invalid. Nothing was sent. Exit 65. */
export class InvalidInputError extends AmsyncError {
  readonly diagnostics: readonly Diagnostic[];

  constructor(message: string, diagnostics: readonly Diagnostic[], code = 'invalid_input', options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'InvalidInputError';
    this.diagnostics = diagnostics;
  }
}

/**
 * A safety guard refused the run and nothing was changed: deletion budget, stale saved plan,
 * empty desired set with prune, another writer holding the lock, a saved plan whose service
 * was not confirmed, a plan that breaks the policy. Exit 3. `approval_required` is the one
 * that comes after the rest of a plan was applied: only the changes that needed an approval
 * were not written.
 */
export class SafetyError extends AmsyncError {
  constructor(
    code: 'deletion_budget' | 'stale_plan' | 'empty_prune' | 'plan_mismatch' | 'writer_locked' | 'not_leader' | 'plan_url_unconfirmed' | 'policy_violation' | 'approval_required',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
    this.name = 'SafetyError';
  }
}

/**
 * The writer lock (the host's lock file, or a Lease's leadership) was lost while held: another
 * writer holds it now. Nothing more is sent; thrown in place of a write that was about to go on
 * the wire, and after the report. Exit 1.
 */
export class LockLostError extends AmsyncError {
  constructor(message: string) {
    super('writer_lock_lost', message);
    this.name = 'LockLostError';
  }
}

/** Some changes failed while others may have applied. Exit 1. */
export class ChangesFailedError extends AmsyncError {
  readonly failed: number;

  constructor(failed: number, message: string) {
    super('changes_failed', message);
    this.name = 'ChangesFailedError';
    this.failed = failed;
  }
}

/**
 * SIGINT or SIGTERM stopped a run: no write started after it, the ones in flight finished,
 * and what was applied was saved and reported. Exit 130 / 143, as a shell reports them.
 */
export class InterruptedError extends AmsyncError {
  readonly signal: 'SIGINT' | 'SIGTERM';

  constructor(signal: 'SIGINT' | 'SIGTERM', message: string) {
    super('interrupted', message);
    this.name = 'InterruptedError';
    this.signal = signal;
  }
}

export const exitCodes = {
  ok: 0,
  failure: 1,
  changesPending: 2,
  refused: 3,
  usage: 64,
  invalidInput: 65,
  sigint: 130,
  sigterm: 143,
} as const;

/** The one mapping from errors to exit codes; used only by the CLI entry. */
export function exitCodeFor(error: unknown): number {
  if (error instanceof UsageError) return exitCodes.usage;
  if (error instanceof InvalidInputError) return exitCodes.invalidInput;
  if (error instanceof SafetyError) return exitCodes.refused;
  if (error instanceof InterruptedError) return error.signal === 'SIGINT' ? exitCodes.sigint : exitCodes.sigterm;
  return exitCodes.failure;
}

/** An interrupt came while this run waited (--lock-timeout) for another writer: it never held the lock, nothing was sent. */
export class LockWaitStoppedError extends AmsyncError {
  readonly path: string;
  /** Who held the lock then: `held by pid 4711 on this host (since …)`. */
  readonly holder: string;

  constructor(path: string, holder: string) {
    super('lock_wait_stopped', `stopped while waiting for the writer lock ${path} (${holder}); nothing was sent`);
    this.name = 'LockWaitStoppedError';
    this.path = path;
    this.holder = holder;
  }
}
