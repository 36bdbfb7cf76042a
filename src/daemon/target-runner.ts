import type { CredentialHandover } from '../api/index.js';
import type { Semaphore, Target } from '../fleet/index.js';
import type { DesiredState, NotifyEvent } from '../model/index.js';
import type { DaemonMetrics, Logger } from '../obs/index.js';
import type { SyncOutcome } from '../sync/index.js';
import type { Timers } from '../time/index.js';
import type { BackoffOptions } from './backoff.js';
import { errorForLog } from './describe-error.js';
import type { FleetTargetMetrics } from './fleet-metrics.js';
import { readiness, type Readiness, type ReadinessOptions } from './readiness.js';
import { Reconciler, type DaemonMode, type LoadedInput } from './reconciler.js';
import { SyncLoop, type RunVerdict, type TriggerReason } from './sync-loop.js';

/** One target's way to its service: a client kept across runs (its limiter and login). */
export interface TargetService {
  /** Requests sent and not answered yet (its client's count). */
  onWire?(): number;
  sync(desired: DesiredState, options: { dryRun: boolean; signal: AbortSignal; stop: AbortSignal; reasons: readonly TriggerReason[] }): Promise<SyncOutcome>;
  close(): void;
  /** With an integrator key: whether its last rotation reached its file (not ready when not). */
  credentialStatus?(): { readonly writeBack: { readonly ok: boolean; readonly error?: string } } | undefined;
  /**
   * Before it closes for a reopen: its integrator key as it stands (a rotated key only memory
   * holds), handed to the service that replaces it (a renewal in flight settled first).
   */
  handOverCredential?(): Promise<CredentialHandover | undefined>;
}

/** A target as /readyz lists it. */
export interface TargetReadiness {
  readonly name: string;
  readonly url: string;
  readonly ready: boolean;
  readonly reason: string;
  /** A run of it has completed (or been abandoned) since it was added. */
  readonly attempted: boolean;
  readonly running: boolean;
  readonly lastOutcome: string | null;
  readonly lastSuccessAt: string | null;
  readonly consecutiveFailures: number;
}

/** What every target's runner takes from the fleet daemon. */
export interface TargetRunnerContext {
  /** The fleet's; a runner logs through a child that names its target. */
  readonly logger: Logger;
  readonly metrics: FleetTargetMetrics;
  readonly timers: Timers;
  readonly backoff: BackoffOptions;
  readonly random: () => number;
  /** Targets reconciled at once at most (`targetConcurrency`). */
  readonly slots: Semaphore;
  readonly readiness: ReadinessOptions;
  /** `credentialFrom`: the credential of the service it replaces (a reopen), if any. */
  openTarget(target: Target, credentialFrom?: CredentialHandover): TargetService;
  /** The target's part of the last good files; throws InvalidInputError while they are invalid. */
  loadTarget(name: string): Promise<LoadedInput>;
  /** The mode the settings say. */
  mode(): DaemonMode;
  /** The shard's Lease is held (false: a standby, which runs nothing). */
  mayWrite(): boolean;
  stopping(): boolean;
  /** Fires when the fleet daemon begins to stop: every run sends nothing more (TargetService.sync's `stop`). */
  readonly stopSignal: AbortSignal;
  runDeadlineMs(): number;
  /** A run of this target ended: the fleet's readiness may have changed. */
  afterRun(): void;
  /** The webhooks: each event of this target's runs, named after it. */
  notify(event: NotifyEvent): void;
}

/**
 * A target's service, reconciler and loop: one per owned target, for as long as it is owned.
 * Its loop is its own (single flight, retry backoff, run deadline); the fleet's slots bound
 * how many targets run at once.
 */
export class TargetRunner {
  readonly target: Target;
  /** Its entry in the targets file: a change opens its service again. */
  readonly key: string;
  readonly service: TargetService;
  readonly reconciler: Reconciler;
  readonly loop: SyncLoop;
  /** A run has completed (or been abandoned) since the target was added. */
  attempted = false;
  readonly #ctx: TargetRunnerContext;
  readonly #metrics: DaemonMetrics;

  constructor(target: Target, ctx: TargetRunnerContext, credentialFrom?: CredentialHandover) {
    this.#ctx = ctx;
    const log = ctx.logger.child({ target: target.name });
    this.#metrics = ctx.metrics.forTarget(target.name);
    this.target = target;
    this.key = targetKey(target);
    this.service = ctx.openTarget(target, credentialFrom);
    this.reconciler = new Reconciler({
      loadDesired: () => ctx.loadTarget(target.name),
      sync: (desired, o) => this.service.sync(desired, o),
      stop: ctx.stopSignal,
      logger: log,
      metrics: this.#metrics,
      timers: ctx.timers,
      mode: () => (ctx.mayWrite() ? ctx.mode() : 'observe'),
      runDeadlineMs: () => ctx.runDeadlineMs(),
      onWatchFiles: () => undefined,
      notify: (event) => ctx.notify({ ...event, target: target.name }),
    });
    this.loop = new SyncLoop({
      run: (reasons) => this.#run(reasons),
      timers: ctx.timers,
      backoff: ctx.backoff,
      random: ctx.random,
      onRetryScheduled: (delayMs, failures) => log.warn({ delayMs, failures }, 'the run failed; retrying with backoff unless something else triggers a run first'),
      onRunError: (error) => log.error({ err: errorForLog(error) }, 'run failed unexpectedly'),
    });
  }

  readiness(): Readiness {
    const s = this.reconciler.status();
    if (!this.attempted) return { ready: false, reason: 'no run yet' };
    const writeBack = this.service.credentialStatus?.()?.writeBack;
    const keyNotKept = writeBack !== undefined && !writeBack.ok ? { keyWriteBackError: writeBack.error ?? 'error' } : {};
    return readiness({ ...s, stopping: false, mode: this.#ctx.mode(), ...keyNotKept }, this.#ctx.readiness);
  }

  /** Its entry in /readyz. */
  describe(): TargetReadiness {
    const s = this.reconciler.status();
    const rd = this.readiness();
    return {
      name: this.target.name,
      url: this.target.url,
      ready: rd.ready,
      reason: rd.reason,
      attempted: this.attempted,
      running: s.running,
      lastOutcome: s.lastOutcome ?? null,
      lastSuccessAt: s.lastSuccessAt === undefined ? null : new Date(s.lastSuccessAt).toISOString(),
      consecutiveFailures: s.consecutiveFailures,
    };
  }

  /** No more runs; once the one in progress is over, its service closes. */
  async stop(): Promise<void> {
    await this.loop.stop();
    this.service.close();
  }

  /** As stop, for a reopen: returns its credential for the service that replaces it. */
  async stopAndHandOver(): Promise<CredentialHandover | undefined> {
    await this.loop.stop();
    try {
      return await this.service.handOverCredential?.();
    } finally {
      this.service.close();
    }
  }

  async #run(reasons: readonly TriggerReason[]): Promise<RunVerdict> {
    const ctx = this.#ctx;
    // A standby (another replica holds the shard's Lease) runs nothing; leading again triggers every target.
    if (!ctx.mayWrite() || ctx.stopping()) return { retry: false };
    await ctx.slots.acquire();
    try {
      const verdict = await this.reconciler.run(reasons);
      this.attempted = true;
      this.#metrics.setReady(this.readiness().ready);
      ctx.afterRun();
      return verdict;
    } finally {
      ctx.slots.release();
    }
  }
}

/** A target's entry as it shapes its service; a credential's value is compared, never shown. */
export function targetKey(target: Target): string {
  const c = target.credentials;
  const credential = c === undefined ? '' : c.kind === 'token' ? `token:${c.token.reveal()}` : c.kind === 'integratorKey' ? `key:${c.refreshToken.reveal()}` : c.kind === 'tokenFile' ? `tokenFile:${c.tokenFile}` : `keyFile:${c.refreshTokenFile}`;
  return JSON.stringify([target.url, credential, target.overrides]);
}
