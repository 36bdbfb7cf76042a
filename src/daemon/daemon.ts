import { systemTimers, type Timers } from '../time/index.js';
import type { SyncOutcome } from '../sync/index.js';
import type { DesiredState, NotifyEvent } from '../model/index.js';
import type { Logger, DaemonMetrics } from '../obs/index.js';
import { readApprovalsFile, type ApprovalsRead } from './approvals-file.js';
import { defaultBackoff } from './backoff.js';
import { DaemonLifecycle, type ShutdownSteps, type StartedDaemon } from './daemon-lifecycle.js';
import { checkDaemonOptions, defaultRunDeadlineMs, initialRuntime, type DaemonOptions, type DaemonRuntimeOptions, type MutableRuntimeOptions } from './daemon-options.js';
import { errorForLog } from './describe-error.js';
import type { FileWatchFactory } from './file-watch.js';
import { InputRecheck } from './input-recheck.js';
import type { PendingApprovalsEvent } from './pending-approvals.js';
import { defaultReadiness, liveness, readiness, type DaemonStatus, type Readiness } from './readiness.js';
import { Reconciler, type LoadedInput } from './reconciler.js';
import type { ScheduleFactory } from './schedule.js';
import type { SignalSource } from './signals.js';
import { SyncLoop, type RunVerdict, type TriggerReason } from './sync-loop.js';

export interface DaemonDeps {
  /** Throws InvalidInputError for a bad file, an unset env secret or an unreadable secret file. */
  loadDesired(): Promise<LoadedInput>;
  /**
   * One reconcile (observe mode and an invalid file: `dryRun`). `signal` aborts when the run
   * passes its deadline: every request of the run must then stop (the client's withSignal).
   * `stop` fires when the daemon begins to stop (SIGTERM, SIGINT): nothing more is sent and
   * requests already sent finish (the client's withStop, and stopWrites).
   * `approvals`: the hashes the approvals file lists now (pass them to runSync).
   */
  sync(desired: DesiredState, options: { dryRun: boolean; signal: AbortSignal; stop: AbortSignal; reasons: readonly TriggerReason[]; approvals: ReadonlySet<string> }): Promise<SyncOutcome>;
  /**
   * The hook for a notification (DESIGN.md §10): after a run that applied, called with the
   * changes that wait for an approval and were not written, when some were not announced
   * before (each change once while it waits). Called synchronously; a throw is logged and
   * ignored. The approval hashes, kinds, keys and rules, never a secret.
   */
  onApprovalsPending?(event: PendingApprovalsEvent): void;
  /**
   * SIGHUP: re-read the settings and rebuild what depends on them; return the daemon options
   * they now say. Throws InvalidInputError for a bad settings file (the old ones are kept).
   */
  reloadSettings?(): Promise<Partial<DaemonRuntimeOptions> | void>;
  /** With an integrator key: whether its last rotation reached its file (/readyz says when not). */
  credentialStatus?(): { readonly writeBack: { readonly ok: boolean; readonly error?: string } } | undefined;
  /** Requests sent and not answered yet (the client's count): logged when a stop lets them finish. */
  onWire?(): number;
  readonly logger: Logger;
  readonly metrics: DaemonMetrics & { render(): Promise<{ contentType: string; body: string }> };
  readonly options: DaemonOptions;
  /** @default the system's */
  readonly timers?: Timers;
  /** Jitter of the retry backoff. @default Math.random */
  readonly random?: () => number;
  /** Where SIGTERM, SIGINT and SIGHUP come from; null: none (the caller calls stop()). @default process */
  readonly signals?: SignalSource | null;
  /** @default node-cron */
  readonly scheduler?: ScheduleFactory;
  /**
   * Leader election: false while another replica holds the Lease. Such a run observes (plans
   * and reports) whatever the mode says. @default always true
   */
  readonly mayWrite?: () => boolean;
  /** @default chokidar on the parent directories */
  readonly watcher?: FileWatchFactory;
  /** Told of drift, applied changes, failures and an invalid file (the webhooks); must not block or throw. */
  readonly notify?: (event: NotifyEvent) => void;
}

/** The started sidecar: its handle (daemon-lifecycle.ts), with the reconciler's status. */
export type RunningDaemon = StartedDaemon<DaemonStatus & Readiness>;


/**
 * The sidecar: one run at start, then a run whenever the watched files change, the schedule
 * fires or SIGHUP comes, one at a time; failed runs retry with backoff. Serves /healthz,
 * /readyz and /metrics. Resolves once the endpoint is listening and the first run is asked
 * for; throws DaemonError when an option is wrong or the address cannot be bound.
 */
export async function startDaemon(deps: DaemonDeps): Promise<RunningDaemon> {
  return new Sidecar(deps).start();
}

/** startDaemon's steps, over the state they share: one reconciler and its loop. */
class Sidecar {
  readonly #deps: DaemonDeps;
  readonly #options: DaemonOptions;
  readonly #log: Logger;
  readonly #timers: Timers;
  /** What a reload (SIGHUP) changes in place. */
  readonly #runtime: MutableRuntimeOptions;
  readonly #lifecycle: DaemonLifecycle;
  readonly #reconciler: Reconciler;
  readonly #loop: SyncLoop;
  readonly #recheck: InputRecheck;

  /** Throws DaemonError when an option is wrong. */
  constructor(deps: DaemonDeps) {
    this.#options = checkDaemonOptions(deps.options);
    this.#deps = deps;
    this.#log = deps.logger;
    this.#timers = deps.timers ?? systemTimers;
    const approvalsFile = this.#options.approvalsFile;
    this.#runtime = { ...initialRuntime(this.#options), ...(approvalsFile === undefined ? {} : { approvalsFile }) };
    this.#lifecycle = new DaemonLifecycle({
      logger: this.#log,
      timers: this.#timers,
      metrics: deps.metrics,
      scheduler: deps.scheduler,
      watcher: deps.watcher,
      shutdown: this.#shutdownSteps(),
    });
    this.#reconciler = this.#createReconciler();
    this.#loop = this.#createLoop();
    this.#recheck = new InputRecheck({
      timers: this.#timers,
      intervalMs: this.#options.invalidRecheckMs ?? 10_000,
      isValid: () => this.#reconciler.inputValid,
      probe: () => this.#reconciler.probeInput(),
      onValid: () => this.#loop.trigger('file'),
      stopping: () => this.#lifecycle.stopping,
    });
  }

  /** Serve, watch, schedule, listen for signals, then ask for the first run. */
  async start(): Promise<RunningDaemon> {
    return this.#lifecycle.start({
      endpoints: { listen: this.#options.listen, readiness: () => this.#status(), liveness: () => liveness(this.#reconciler.status()) },
      watch: { files: this.#watched([]), debounceMs: this.#runtime.debounceMs, pollMs: this.#options.watchPollMs },
      schedule: this.#runtime.schedule,
      onSchedule: () => this.#onSchedule(),
      signals: this.#deps.signals,
      reloads: 'file',
      loop: this.#loop,
      status: () => this.#status(),
      logStarted: (url) => this.#logStarted(url),
    });
  }

  #createReconciler(): Reconciler {
    const deps = this.#deps;
    return new Reconciler({
      loadDesired: () => deps.loadDesired(),
      sync: (desired, o) => deps.sync(desired, o),
      stop: this.#lifecycle.stopSignal,
      ...(deps.notify ? { notify: deps.notify } : {}),
      readApprovals: () => this.#readApprovals(),
      ...(deps.onApprovalsPending ? { onApprovalsPending: (e: PendingApprovalsEvent) => deps.onApprovalsPending!(e) } : {}),
      ...(deps.reloadSettings ? { reloadSettings: () => this.#reload(deps.reloadSettings!) } : {}),
      logger: this.#log,
      metrics: deps.metrics,
      timers: this.#timers,
      mode: () => (deps.mayWrite?.() === false ? 'observe' : this.#runtime.mode),
      runDeadlineMs: () => this.#runtime.runDeadlineMs ?? defaultRunDeadlineMs,
      onWatchFiles: (files) => this.#lifecycle.setWatchedFiles(this.#watched(files)),
    });
  }

  #createLoop(): SyncLoop {
    return new SyncLoop({
      run: (reasons) => this.#run(reasons),
      timers: this.#timers,
      backoff: this.#options.backoff ?? defaultBackoff,
      random: this.#deps.random ?? Math.random,
      onRetryScheduled: (delayMs, failures) => this.#log.warn({ delayMs, failures }, 'the run failed; retrying with backoff unless something else triggers a run first'),
      onRunError: (error) => this.#log.error({ err: errorForLog(error) }, 'run failed unexpectedly'),
    });
  }

  async #run(reasons: readonly TriggerReason[]): Promise<RunVerdict> {
    const verdict = await this.#reconciler.run(reasons);
    this.#deps.metrics.setReady(this.#status().ready);
    this.#recheck.arm();
    return verdict;
  }

  #onSchedule(): void {
    this.#log.debug('scheduled run');
    this.#loop.trigger('schedule');
  }

  /** What is watched besides the files the desired state reads: the -f paths, and the approvals file. */
  #watched(files: readonly string[]): string[] {
    const { approvalsFile } = this.#runtime;
    return [...(this.#options.watch ?? [this.#options.file]), ...files, ...(approvalsFile === undefined ? [] : [approvalsFile])];
  }

  #readApprovals(): Promise<ApprovalsRead> {
    const { approvalsFile } = this.#runtime;
    return approvalsFile === undefined ? Promise.resolve({ ok: true, hashes: new Set<string>() }) : readApprovalsFile(approvalsFile);
  }

  #status(): DaemonStatus & Readiness {
    const writeBack = this.#deps.credentialStatus?.()?.writeBack;
    const s: DaemonStatus = {
      ...this.#reconciler.status(),
      stopping: this.#lifecycle.stopping,
      mode: this.#runtime.mode,
      ...(writeBack !== undefined && !writeBack.ok ? { keyWriteBackError: writeBack.error ?? 'error' } : {}),
    };
    return { ...s, ...readiness(s, this.#options.readiness ?? defaultReadiness) };
  }

  /** SIGHUP: the settings as they now are; a bad schedule keeps the previous one. */
  async #reload(read: NonNullable<DaemonDeps['reloadSettings']>): Promise<void> {
    const changes = (await read()) ?? {};
    this.#applyRuntime(changes);
    if (changes.schedule && changes.schedule !== this.#runtime.schedule && !this.#lifecycle.stopping) await this.#replaceSchedule(changes.schedule);
  }

  #applyRuntime(changes: Partial<DaemonRuntimeOptions>): void {
    const runtime = this.#runtime;
    if (changes.mode && changes.mode !== runtime.mode) {
      this.#log.info({ from: runtime.mode, to: changes.mode }, 'mode changed');
      runtime.mode = changes.mode;
    }
    if (changes.debounceMs !== undefined && changes.debounceMs !== runtime.debounceMs) {
      runtime.debounceMs = changes.debounceMs;
      this.#lifecycle.setDebounce(changes.debounceMs);
    }
    if (changes.shutdownGraceMs !== undefined) runtime.shutdownGraceMs = changes.shutdownGraceMs;
    if (changes.runDeadlineMs !== undefined) runtime.runDeadlineMs = changes.runDeadlineMs;
    // A key present but undefined unsets it. The watch follows at the run's load (onWatchFiles).
    if ('approvalsFile' in changes) {
      if (changes.approvalsFile !== runtime.approvalsFile) this.#log.info({ from: runtime.approvalsFile ?? null, to: changes.approvalsFile ?? null }, 'approvals file changed');
      if (changes.approvalsFile === undefined) delete runtime.approvalsFile;
      else runtime.approvalsFile = changes.approvalsFile;
    }
  }

  async #replaceSchedule(expression: string): Promise<void> {
    try {
      await this.#lifecycle.replaceSchedule(expression, () => this.#onSchedule());
      this.#log.info({ from: this.#runtime.schedule, to: expression }, 'schedule changed');
      this.#runtime.schedule = expression;
    } catch (error) {
      this.#log.error({ err: errorForLog(error) }, 'the new schedule is invalid; keeping the previous one');
    }
  }

  #shutdownSteps(): ShutdownSteps {
    return {
      graceMs: () => this.#runtime.shutdownGraceMs,
      onStopping: (reason, graceMs) => {
        this.#recheck.cancel();
        // The stop signal has fired: what is counted here was on the wire, and only that goes on.
        const sent = this.#deps.onWire?.();
        if (this.#loop.running) this.#log.info({ reason, graceMs, ...(sent === undefined ? {} : { sent }) }, 'stopping: the run in progress sends nothing more; the requests it already sent finish');
        else this.#log.info({ reason }, 'stopping');
      },
      stopRuns: () => this.#loop.stop(),
      unfinishedMessage: 'the run in progress did not finish within the grace period; stopping anyway (the next run converges)',
    };
  }

  #logStarted(url: string): void {
    const { schedule, mode, debounceMs, approvalsFile } = this.#runtime;
    this.#log.info({ url, file: this.#options.file, schedule, mode, debounceMs, ...(approvalsFile === undefined ? {} : { approvalsFile }) }, 'daemon started');
  }
}
