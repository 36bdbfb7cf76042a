import type { AuditControlEntry } from '../app/index.js';
import type { SyncOutcome } from '../sync/index.js';
import type { DesiredState, NotifyEvent } from '../model/index.js';
import type { Logger, DaemonMetrics } from '../obs/index.js';
import type { Timers } from '../time/index.js';
import { readApprovalsFile, type ApprovalsRead } from './approvals-file.js';
import { Daemon, type DaemonTargets } from './daemon.js';
import type { StartedDaemon, StopResult } from './daemon-lifecycle.js';
import { checkDaemonOptions, initialRuntime, type DaemonOptions, type DaemonRuntimeOptions } from './daemon-options.js';
import type { FileWatchFactory } from './file-watch.js';
import type { PendingApprovalsEvent } from './pending-approvals.js';
import { defaultReadiness, liveness, readiness, type DaemonStatus, type Readiness } from './readiness.js';
import type { LoadedInput } from './reconciler.js';
import type { ScheduleFactory } from './schedule.js';
import type { SignalSource } from './signals.js';
import type { TriggerReason } from './sync-loop.js';
import { TargetRunner } from './target-runner.js';

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
  sync(desired: DesiredState, options: { dryRun: boolean; signal: AbortSignal; stop: AbortSignal; reasons: readonly TriggerReason[]; approvals: ReadonlySet<string>; now?: () => number }): Promise<SyncOutcome>;
  /**
   * The hook for a notification (README, "Teams and governance"): after a run that applied, called with the
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
  /** Writes a control line to the audit log (suspend, resume, windows, override); absent without one. */
  readonly audit?: (entry: AuditControlEntry) => void;
}

/** The started daemon of one service: its handle (daemon-lifecycle.ts), with its target's status. */
export type RunningDaemon = StartedDaemon<DaemonStatus & Readiness>;

/**
 * The daemon of one service, a fleet of one target: one run at start, then a run whenever the
 * watched files change, the schedule fires or SIGHUP comes, one at a time; failed runs retry
 * with backoff. Serves /healthz, /readyz and /metrics. Resolves once the endpoint is listening
 * and the first run is asked for; throws DaemonError when an option is wrong or the address
 * cannot be bound.
 */
export async function startDaemon(deps: DaemonDeps): Promise<RunningDaemon> {
  const options = checkDaemonOptions(deps.options);
  const approvalsFile = options.approvalsFile;
  const runtime = { ...initialRuntime(options), ...(approvalsFile === undefined ? {} : { approvalsFile }) };
  const parts = { logger: deps.logger, metrics: deps.metrics, notify: deps.notify, audit: deps.audit, options, runtime, logsChanges: true, timers: deps.timers, random: deps.random, signals: deps.signals, scheduler: deps.scheduler, watcher: deps.watcher };
  return new Daemon<DaemonStatus & Readiness>(parts, (daemon) => new OneService(daemon, deps)).start();
}

/**
 * The one target of `amsync daemon` without a targets file: the service the settings name. Its
 * runner reads the desired files at each run (and the settings, on SIGHUP), and counts in the
 * process's series, without a target label.
 */
class OneService implements DaemonTargets<DaemonStatus & Readiness> {
  readonly reloads = 'file';
  readonly fleet = false;
  readonly unfinishedMessage = 'the run in progress did not finish within the grace period; stopping anyway (the next run converges)';
  readonly #daemon: Daemon<DaemonStatus & Readiness>;
  readonly #deps: DaemonDeps;
  readonly #runner: TargetRunner;

  constructor(daemon: Daemon<DaemonStatus & Readiness>, deps: DaemonDeps) {
    this.#daemon = daemon;
    this.#deps = deps;
    const reload = deps.reloadSettings;
    const onApprovalsPending = deps.onApprovalsPending;
    this.#runner = new TargetRunner({
      ...daemon.sharedRunnerParts(),
      logger: daemon.log,
      metrics: deps.metrics,
      // The caller's deps are the service: a run calls deps.sync as it stands. No close: the
      // caller closes what it opened once the daemon has stopped.
      service: deps,
      loadInput: () => deps.loadDesired(),
      mode: () => (deps.mayWrite?.() === false ? 'observe' : daemon.modeFor('', daemon.runtime.mode)),
      onWatchFiles: (files) => daemon.lifecycle.setWatchedFiles(this.#watched(files)),
      ...(deps.notify ? { notify: deps.notify } : {}),
      readApprovals: () => this.#readApprovals(),
      ...(onApprovalsPending ? { onApprovalsPending: (e: PendingApprovalsEvent) => onApprovalsPending(e) } : {}),
      ...(reload ? { reloadSettings: () => daemon.reload(reload) } : {}),
      afterRun: () => {
        daemon.setReady(this.status().ready);
        daemon.recheckInput();
      },
    });
    daemon.runners.set('', this.#runner);
  }

  /** What is watched besides the files the desired state reads: the -f paths, and the approvals file. */
  get watched(): readonly string[] {
    return this.#watched([]);
  }

  status(): DaemonStatus & Readiness {
    const writeBack = this.#deps.credentialStatus?.()?.writeBack;
    const held = this.#daemon.gate.held();
    const s: DaemonStatus = {
      ...this.#runner.reconciler.status(),
      stopping: this.#daemon.lifecycle.stopping,
      mode: this.#daemon.runtime.mode,
      ...(held === undefined ? {} : { writesHeld: held }),
      ...(writeBack !== undefined && !writeBack.ok ? { keyWriteBackError: writeBack.error ?? 'error' } : {}),
    };
    return { ...s, ...readiness(s, this.#daemon.options.readiness ?? defaultReadiness) };
  }

  liveness(): Readiness {
    return liveness(this.#runner.reconciler.status());
  }

  inputValid(): boolean {
    return this.#runner.reconciler.inputValid;
  }

  probeInput(): Promise<boolean> {
    return this.#runner.reconciler.probeInput();
  }

  onStopping(reason: StopResult['reason'], graceMs: number): void {
    // The stop signal has fired: what is counted here was on the wire, and only that goes on.
    const sent = this.#deps.onWire?.();
    const log = this.#daemon.log;
    if (this.#runner.loop.running) log.info({ reason, graceMs, ...(sent === undefined ? {} : { sent }) }, 'stopping: the run in progress sends nothing more; the requests it already sent finish');
    else log.info({ reason }, 'stopping');
  }

  logStarted(url: string): void {
    const { schedule, mode, debounceMs, approvalsFile } = this.#daemon.runtime;
    this.#daemon.log.info({ url, file: this.#daemon.options.file, schedule, mode, debounceMs, ...(approvalsFile === undefined ? {} : { approvalsFile }) }, 'daemon started');
  }

  #watched(files: readonly string[]): string[] {
    const options = this.#daemon.options;
    const { approvalsFile } = this.#daemon.runtime;
    return [...(options.watch ?? [options.file]), ...files, ...(approvalsFile === undefined ? [] : [approvalsFile])];
  }

  #readApprovals(): Promise<ApprovalsRead> {
    const { approvalsFile } = this.#daemon.runtime;
    return approvalsFile === undefined ? Promise.resolve({ ok: true, hashes: new Set<string>() }) : readApprovalsFile(approvalsFile);
  }
}
