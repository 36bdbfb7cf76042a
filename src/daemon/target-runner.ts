import type { CredentialHandover } from '../api/index.js';
import type { SyncOptions } from '../app/index.js';
import type { Semaphore } from '../fleet/index.js';
import type { DesiredState, NotifyEvent } from '../model/index.js';
import type { DaemonMetrics, Logger } from '../obs/index.js';
import type { SyncOutcome } from '../sync/index.js';
import type { Timers } from '../time/index.js';
import type { ApprovalsRead } from './approvals-file.js';
import type { BackoffOptions } from './backoff.js';
import { errorForLog } from './describe-error.js';
import type { PendingApprovalsEvent } from './pending-approvals.js';
import { Reconciler, type DaemonMode, type LoadedInput } from './reconciler.js';
import { SyncLoop, type RunVerdict, type TriggerReason } from './sync-loop.js';

/** What one run of a target asks of its service. */
export interface TargetSyncOptions {
  readonly dryRun: boolean;
  /** Aborts when the run passes its deadline: every request of the run stops. */
  readonly signal: AbortSignal;
  /** Fires when the daemon begins to stop: nothing more is sent, what was sent finishes. */
  readonly stop: AbortSignal;
  readonly reasons: readonly TriggerReason[];
  /** The hashes the approvals file lists now (none without one). */
  readonly approvals: ReadonlySet<string>;
  /** The daemon's wall clock (virtual in tests): expiries are planned against it. */
  readonly now?: () => number;
}

/** One target's way to its service: a client kept across runs (its limiter and login). */
export interface TargetService {
  /** Requests sent and not answered yet (its client's count). */
  onWire?(): number;
  sync(desired: DesiredState, options: TargetSyncOptions): Promise<SyncOutcome>;
  /** When the target goes (or the daemon stops): its client closes. Absent: the caller closes what it opened. */
  close?(): void;
  /** With an integrator key: whether its last rotation reached its file (not ready when not). */
  credentialStatus?(): { readonly writeBack: { readonly ok: boolean; readonly error?: string } } | undefined;
  /**
   * Before it closes for a reopen: its integrator key as it stands (a rotated key only memory
   * holds), handed to the service that replaces it (a renewal in flight settled first).
   */
  handOverCredential?(): Promise<CredentialHandover | undefined>;
}

/** What a runner is made of: its service, where its input comes from, and what it tells. */
export interface TargetRunnerParts {
  /** Its log: the daemon's, or a child that names its target. */
  readonly logger: Logger;
  /** Where its runs are counted: the process's series (one service), or its target's. */
  readonly metrics: DaemonMetrics;
  readonly timers: Timers;
  readonly backoff: BackoffOptions;
  readonly random: () => number;
  readonly service: TargetService;
  /** Throws InvalidInputError for a bad input: the reconciler keeps the last good one. */
  loadInput(): Promise<LoadedInput>;
  /** The mode of the next run. */
  mode(): DaemonMode;
  runDeadlineMs(): number;
  /** Fires when the daemon begins to stop (the lifecycle's stopSignal). */
  readonly stop: AbortSignal;
  /** The files its input reads changed. */
  onWatchFiles(files: readonly string[]): void;
  notify?(event: NotifyEvent): void;
  readApprovals?(): Promise<ApprovalsRead>;
  onApprovalsPending?(event: PendingApprovalsEvent): void;
  /** SIGHUP, in the run it triggers: the settings as they now are (see Reconciler). */
  reloadSettings?(): Promise<void>;
  /** Whether a run goes ahead now; false skips it (a standby replica, a stop begun). @default always */
  mayRun?(): boolean;
  /** Runs of all targets at once at most (`targetConcurrency`). @default unbounded */
  readonly slots?: Semaphore;
  /** A run ended (not a skipped one): readiness may have changed. */
  afterRun(runner: TargetRunner): void;
}

/**
 * One target's service, reconciler and loop, for as long as the daemon runs it: the daemon of
 * one service has one, a fleet's one per owned target. Its loop is its own (single flight,
 * retry backoff, run deadline); the daemon's slots bound how many run at once.
 */
export class TargetRunner {
  readonly service: TargetService;
  readonly reconciler: Reconciler;
  readonly loop: SyncLoop;
  /** A run has completed (or been abandoned) since the runner was made. */
  attempted = false;
  readonly #parts: TargetRunnerParts;
  /** The run asked for at the next expiry (or 24 h before one), and when. */
  #expiryTimer: { at: number; handle: unknown } | undefined;
  /** While a run waits for a slot: lets it go without one (an expiry came due). */
  #urgent: (() => void) | undefined;
  #stopped = false;

  constructor(parts: TargetRunnerParts) {
    this.#parts = parts;
    const log = parts.logger;
    this.service = parts.service;
    this.reconciler = new Reconciler({
      loadDesired: () => parts.loadInput(),
      sync: (desired, o) => this.service.sync(desired, o),
      stop: parts.stop,
      ...(parts.notify ? { notify: (event: NotifyEvent) => parts.notify!(event) } : {}),
      ...(parts.readApprovals ? { readApprovals: () => parts.readApprovals!() } : {}),
      ...(parts.onApprovalsPending ? { onApprovalsPending: (e: PendingApprovalsEvent) => parts.onApprovalsPending!(e) } : {}),
      ...(parts.reloadSettings ? { reloadSettings: () => parts.reloadSettings!() } : {}),
      logger: log,
      metrics: parts.metrics,
      timers: parts.timers,
      mode: () => parts.mode(),
      runDeadlineMs: () => parts.runDeadlineMs(),
      onWatchFiles: (files) => parts.onWatchFiles(files),
    });
    this.loop = new SyncLoop({
      run: (reasons) => this.#run(reasons),
      timers: parts.timers,
      backoff: parts.backoff,
      random: parts.random,
      onRetryScheduled: (delayMs, failures) => log.warn({ delayMs, failures }, 'the run failed; retrying with backoff unless something else triggers a run first'),
      onRunError: (error) => log.error({ err: errorForLog(error) }, 'run failed unexpectedly'),
    });
  }

  /** The metrics its runs are counted in. */
  get metrics(): DaemonMetrics {
    return this.#parts.metrics;
  }

  /** No more runs; once the one in progress is over, its service closes. */
  async stop(): Promise<void> {
    this.#disarmExpiry();
    await this.loop.stop();
    this.service.close?.();
  }

  /** As stop, for a reopen: returns its credential for the service that replaces it. */
  async stopAndHandOver(): Promise<CredentialHandover | undefined> {
    this.#disarmExpiry();
    await this.loop.stop();
    try {
      return await this.service.handOverCredential?.();
    } finally {
      this.service.close?.();
    }
  }

  /**
   * A run at the next expiry of the last plan (or 24 h before it, for `access_expiring`), on
   * the daemon's clock: an expired item is deleted then, not at the next scheduled run.
   */
  #armExpiry(): void {
    const at = this.reconciler.nextExpiryWakeAt;
    if (this.#stopped || this.#parts.stop.aborted || at === this.#expiryTimer?.at) return;
    this.#disarmExpiry(false);
    if (at === undefined) return;
    const timers = this.#parts.timers;
    // setTimeout holds at most 2^31-1 ms (~24.8 days): a later expiry wakes a run that re-arms.
    const delay = Math.min(Math.max(0, at - timers.wallNow()), 2 ** 31 - 1);
    const handle = timers.setTimeout(() => {
      this.#expiryTimer = undefined;
      // The run's line at info says `reasons: ["expiry"]`.
      this.#parts.logger.debug({ at: new Date(at).toISOString() }, 'an expiry or a key rotation is due: run');
      // A run waiting for a slot (behind other targets' runs, one of them maybe hung) goes now.
      this.#urgent?.();
      this.loop.trigger('expiry');
    }, delay);
    this.#expiryTimer = { at, handle };
  }

  #disarmExpiry(stopping = true): void {
    if (stopping) this.#stopped = true;
    if (this.#expiryTimer) this.#parts.timers.clearTimeout(this.#expiryTimer.handle);
    this.#expiryTimer = undefined;
  }

  async #run(reasons: readonly TriggerReason[]): Promise<RunVerdict> {
    const parts = this.#parts;
    if (parts.mayRun?.() === false) return { retry: false };
    // No slots, no await: a run of one service starts in the tick it is asked for.
    const release = parts.slots ? await this.#slot(parts.slots, reasons) : undefined;
    try {
      const verdict = await this.reconciler.run(reasons);
      this.attempted = true;
      this.#armExpiry();
      parts.afterRun(this);
      return verdict;
    } finally {
      release?.();
    }
  }

  /**
   * A slot of `targetConcurrency` for a run, and how to give it back. A run for an expiry takes
   * none, and one waiting for a slot when an expiry of its target comes due stops waiting: an
   * expired account is removed at its time, never behind other targets' runs (one of them may
   * hang until its deadline). Such runs are few (one per target per expiry) and short.
   */
  async #slot(slots: Semaphore, reasons: readonly TriggerReason[]): Promise<(() => void) | undefined> {
    if (reasons.includes('expiry')) return undefined;
    let bypassed = false;
    const acquired = slots.acquire().then(() => {
      // Granted after the run went without it: given back at once.
      if (!bypassed) return true;
      slots.release();
      return false;
    });
    const urgent = new Promise<false>((resolve) => {
      this.#urgent = () => {
        bypassed = true;
        resolve(false);
      };
    });
    const held = await Promise.race([acquired, urgent]);
    this.#urgent = undefined;
    if (!held) this.#parts.logger.info('an expiry is due: this run goes without waiting for a slot (targetConcurrency)');
    return held ? () => slots.release() : undefined;
  }
}

/**
 * What cancels a run's requests: its deadline, and for a run that writes under leader election
 * the end of the term too, so no request of a deposed leader outlives its lease. A run that
 * only observes (every run of a replica that does not lead) keeps the deadline alone: the term
 * of a follower is aborted from the start.
 */
export function runSignal(deadline: AbortSignal, term: AbortSignal | undefined, dryRun: boolean): AbortSignal {
  return term === undefined || dryRun ? deadline : AbortSignal.any([deadline, term]);
}

/**
 * What stops a run short of the wire (nothing more sent, what was sent finishes): the daemon
 * beginning to stop (SIGTERM), or the Lease's term ending.
 */
export function stopWritesOf(stop: AbortSignal, term: AbortSignal | undefined): AbortSignal {
  return term === undefined ? stop : AbortSignal.any([stop, term]);
}

/** What started a daemon run, as the audit log names it: a file change wins over the schedule. */
export function auditTrigger(reasons: readonly TriggerReason[]): NonNullable<SyncOptions['trigger']> {
  if (reasons.includes('ctl')) return 'manual';
  if (reasons.includes('file') || reasons.includes('reload')) return 'file-change';
  if (reasons.includes('start') || reasons.includes('leader')) return 'startup';
  return 'schedule';
}
