import { systemTimers, type Timers } from '../time/index.js';
import type { SyncOutcome } from '../sync/index.js';
import type { DesiredState, NotifyEvent } from '../model/index.js';
import type { Logger, DaemonMetrics } from '../obs/index.js';
import { defaultBackoff, type BackoffOptions } from './backoff.js';
import { DaemonError } from './daemon-error.js';
import { errorForLog } from './describe-error.js';
import { watchFiles as chokidarWatch, type FileWatch, type FileWatchFactory } from './file-watch.js';
import { startHealthServer } from './health-server.js';
import { parseListen } from './listen-address.js';
import { defaultReadiness, liveness, readiness, type DaemonStatus, type Readiness, type ReadinessOptions } from './readiness.js';
import { Reconciler, type DaemonMode, type LoadedInput } from './reconciler.js';
import { readApprovalsFile } from './approvals-file.js';
import type { PendingApprovalsEvent } from './pending-approvals.js';
import { checkSchedule, cronSchedule, type Schedule, type ScheduleFactory } from './schedule.js';
import { onSignals, type SignalSource } from './signals.js';
import { SyncLoop, type TriggerReason } from './sync-loop.js';

export interface DaemonOptions {
  /** The desired-state file, as logs name it (several: their paths joined); watched even while it does not load. */
  readonly file: string;
  /**
   * The paths to watch before the files load: the desired files and folders as given to -f.
   * @default [file]
   */
  readonly watch?: readonly string[];
  /**
   * The approvals file (`daemon.approvalsFile`), watched and read at every run that may write:
   * a change the policy gates is written only once an approval listed there covers it.
   * Unset: such changes stay pending. The daemon never applies one by itself.
   */
  readonly approvalsFile?: string;
  /** Cron, five fields or six (seconds first). */
  readonly schedule: string;
  /** HOST:PORT of /healthz, /readyz, /metrics; port 0 picks a free one. */
  readonly listen: string;
  readonly mode: DaemonMode;
  /** Quiet time after a file event before the contents are compared. */
  readonly debounceMs: number;
  /** How long a run in progress may go on after SIGTERM/SIGINT. */
  readonly shutdownGraceMs: number;
  /** A run still going after this long is abandoned (requests cancelled, health red). @default 600000 */
  readonly runDeadlineMs?: number;
  /** Retry of failed runs. @default { baseMs: 5000, maxMs: 300000 } */
  readonly backoff?: BackoffOptions;
  /** @default { failureThreshold: 3 } */
  readonly readiness?: ReadinessOptions;
  /** While the file is invalid, try to load it (offline) this often. @default 10000 */
  readonly invalidRecheckMs?: number;
  /** Compare watched contents this often even without file events; 0 = never. @default 30000 */
  readonly watchPollMs?: number;
}

/** What a settings reload (SIGHUP) may change without a restart. `listen` needs one. */
export type DaemonRuntimeOptions = Pick<DaemonOptions, 'schedule' | 'mode' | 'debounceMs' | 'shutdownGraceMs' | 'runDeadlineMs' | 'approvalsFile'>;

export interface DaemonDeps {
  /** Throws InvalidInputError for a bad file, an unset env secret or an unreadable secret file. */
  loadDesired(): Promise<LoadedInput>;
  /**
   * One reconcile (observe mode and an invalid file: `dryRun`). `signal` aborts when the run
   * passes its deadline: every request of the run must then stop (the client's withSignal).
   * `approvals`: the hashes the approvals file lists now (pass them to runSync).
   */
  sync(desired: DesiredState, options: { dryRun: boolean; signal: AbortSignal; reasons: readonly TriggerReason[]; approvals: ReadonlySet<string> }): Promise<SyncOutcome>;
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

export interface StopResult {
  /** What stopped the daemon. */
  readonly reason: 'SIGTERM' | 'SIGINT' | 'stop';
  /** The run in progress (if any) ended within the grace period. */
  readonly finished: boolean;
  /** A second signal came: exit now, without waiting any longer. */
  readonly forced: boolean;
}

export interface RunningDaemon {
  /** `http://HOST:PORT` of the health endpoint. */
  readonly url: string;
  /**
   * Resolves when the daemon has stopped (after SIGTERM/SIGINT or stop()), or at once on a
   * second signal with `forced`. It never rejects. The command turns it into an exit code:
   * the daemon itself never exits the process.
   */
  readonly stopped: Promise<StopResult>;
  stop(reason?: StopResult['reason']): Promise<StopResult>;
  status(): DaemonStatus & Readiness;
  /** Asks for a run, as a file change would. */
  trigger(reason?: TriggerReason): void;
  /** Resolves when no run is in progress. */
  idle(): Promise<void>;
}

/**
 * The sidecar: one run at start, then a run whenever the watched files change, the schedule
 * fires or SIGHUP comes, one at a time; failed runs retry with backoff. Serves /healthz,
 * /readyz and /metrics. Resolves once the endpoint is listening and the first run is asked
 * for; throws DaemonError when an option is wrong or the address cannot be bound.
 */
export async function startDaemon(deps: DaemonDeps): Promise<RunningDaemon> {
  const options = checkOptions(deps.options);
  const timers = deps.timers ?? systemTimers;
  const log = deps.logger;
  const metrics = deps.metrics;
  const scheduler = deps.scheduler ?? cronSchedule;
  const watcherFactory = deps.watcher ?? chokidarWatch;
  const readinessOptions = options.readiness ?? defaultReadiness;
  const runtime: { -readonly [K in keyof DaemonRuntimeOptions]: DaemonRuntimeOptions[K] } = {
    schedule: options.schedule,
    mode: options.mode,
    debounceMs: options.debounceMs,
    shutdownGraceMs: options.shutdownGraceMs,
    runDeadlineMs: options.runDeadlineMs ?? defaultRunDeadlineMs,
    ...(options.approvalsFile === undefined ? {} : { approvalsFile: options.approvalsFile }),
  };
  // What is watched besides the files the desired state reads: the -f paths, and the approvals file.
  const watched = (files: readonly string[]): string[] => [...(options.watch ?? [options.file]), ...files, ...(runtime.approvalsFile === undefined ? [] : [runtime.approvalsFile])];
  let stopping = false;
  let watch: FileWatch | undefined;
  let schedule: Schedule | undefined;
  let recheckHandle: unknown;

  const reconciler = new Reconciler({
    loadDesired: () => deps.loadDesired(),
    sync: (desired, o) => deps.sync(desired, o),
    ...(deps.notify ? { notify: deps.notify } : {}),
    readApprovals: () => (runtime.approvalsFile === undefined ? Promise.resolve({ ok: true, hashes: new Set<string>() }) : readApprovalsFile(runtime.approvalsFile)),
    ...(deps.onApprovalsPending ? { onApprovalsPending: (e: PendingApprovalsEvent) => deps.onApprovalsPending!(e) } : {}),
    ...(deps.reloadSettings ? { reloadSettings: () => reload(deps.reloadSettings!) } : {}),
    logger: log,
    metrics,
    timers,
    mode: () => (deps.mayWrite?.() === false ? 'observe' : runtime.mode),
    runDeadlineMs: () => runtime.runDeadlineMs ?? defaultRunDeadlineMs,
    onWatchFiles: (files) => {
      watch?.setFiles(watched(files)).catch((error: unknown) => log.warn({ err: errorForLog(error) }, 'could not update the watched files'));
    },
  });
  const status = (): DaemonStatus & Readiness => {
    const writeBack = deps.credentialStatus?.()?.writeBack;
    const s: DaemonStatus = {
      ...reconciler.status(),
      stopping,
      mode: runtime.mode,
      ...(writeBack !== undefined && !writeBack.ok ? { keyWriteBackError: writeBack.error ?? 'error' } : {}),
    };
    return { ...s, ...readiness(s, readinessOptions) };
  };
  const loop = new SyncLoop({
    run: async (reasons) => {
      const verdict = await reconciler.run(reasons);
      metrics.setReady(status().ready);
      armRecheck();
      return verdict;
    },
    timers,
    backoff: options.backoff ?? defaultBackoff,
    random: deps.random ?? Math.random,
    onRetryScheduled: (delayMs, failures) => log.warn({ delayMs, failures }, 'the run failed; retrying with backoff unless something else triggers a run first'),
    onRunError: (error) => log.error({ err: errorForLog(error) }, 'run failed unexpectedly'),
  });

  async function reload(read: NonNullable<DaemonDeps['reloadSettings']>): Promise<void> {
    const changes = (await read()) ?? {};
    if (changes.mode && changes.mode !== runtime.mode) {
      log.info({ from: runtime.mode, to: changes.mode }, 'mode changed');
      runtime.mode = changes.mode;
    }
    if (changes.debounceMs !== undefined && changes.debounceMs !== runtime.debounceMs) {
      runtime.debounceMs = changes.debounceMs;
      watch?.setDebounce(changes.debounceMs);
    }
    if (changes.shutdownGraceMs !== undefined) runtime.shutdownGraceMs = changes.shutdownGraceMs;
    if (changes.runDeadlineMs !== undefined) runtime.runDeadlineMs = changes.runDeadlineMs;
    // A key present but undefined unsets it. The watch follows at the run's load (onWatchFiles).
    if ('approvalsFile' in changes) {
      if (changes.approvalsFile !== runtime.approvalsFile) log.info({ from: runtime.approvalsFile ?? null, to: changes.approvalsFile ?? null }, 'approvals file changed');
      if (changes.approvalsFile === undefined) delete runtime.approvalsFile;
      else runtime.approvalsFile = changes.approvalsFile;
    }
    if (changes.schedule && changes.schedule !== runtime.schedule && !stopping) {
      try {
        const next = scheduler(changes.schedule, onSchedule, log);
        // Swap before waiting: a stop that comes meanwhile then stops the new one.
        const previous = schedule;
        schedule = next;
        await previous?.stop();
        log.info({ from: runtime.schedule, to: changes.schedule }, 'schedule changed');
        runtime.schedule = changes.schedule;
      } catch (error) {
        log.error({ err: errorForLog(error) }, 'the new schedule is invalid; keeping the previous one');
      }
    }
  }

  function onSchedule(): void {
    log.debug('scheduled run');
    loop.trigger('schedule');
  }

  /** While the file is invalid, look again now and then; a good load triggers a run. */
  function armRecheck(): void {
    if (recheckHandle !== undefined) timers.clearTimeout(recheckHandle);
    recheckHandle = undefined;
    if (stopping || reconciler.inputValid) return;
    recheckHandle = timers.setTimeout(() => {
      recheckHandle = undefined;
      void reconciler.probeInput().then((ok) => {
        if (stopping) return;
        if (ok) loop.trigger('file');
        else armRecheck();
      });
    }, options.invalidRecheckMs ?? 10_000);
  }

  const server = await startHealthServer({
    address: parseListen(options.listen),
    readiness: () => status(),
    liveness: () => liveness(reconciler.status()),
    metrics: () => metrics.render(),
    logger: log,
  });

  try {
    watch = await watcherFactory({
      files: watched([]),
      debounceMs: runtime.debounceMs,
      onChange: (files) => {
        log.info({ files }, 'watched file changed');
        loop.trigger('file');
      },
      logger: log,
      timers,
      ...(options.watchPollMs === undefined ? {} : { pollMs: options.watchPollMs }),
    });
  } catch (error) {
    // Not fatal: the schedule re-reads the file at every run.
    log.warn({ err: errorForLog(error) }, 'cannot watch the files; changes are picked up at the next scheduled run');
  }
  try {
    schedule = scheduler(runtime.schedule, onSchedule, log);
  } catch (error) {
    await watch?.close();
    await server.close();
    throw error;
  }

  let resolveStopped!: (result: StopResult) => void;
  const stopped = new Promise<StopResult>((resolve) => {
    resolveStopped = resolve;
  });
  let stopping$: Promise<StopResult> | undefined;
  let unsubscribe = (): void => {};

  const stop = (reason: StopResult['reason'] = 'stop'): Promise<StopResult> => {
    stopping$ ??= (async () => {
      stopping = true;
      metrics.setReady(false);
      if (recheckHandle !== undefined) timers.clearTimeout(recheckHandle);
      const grace = runtime.shutdownGraceMs;
      if (loop.running) log.info({ reason, graceMs: grace }, 'stopping: letting the run in progress finish');
      else log.info({ reason }, 'stopping');
      // First of all no new run; then the triggers go.
      const idle = loop.stop();
      await Promise.allSettled([schedule?.stop(), watch?.close()]);
      let graceHandle: unknown;
      const finished = await Promise.race([
        idle.then(() => true),
        new Promise<boolean>((resolve) => {
          graceHandle = timers.setTimeout(() => resolve(false), grace);
        }),
      ]);
      timers.clearTimeout(graceHandle);
      if (!finished) log.error({ graceMs: grace }, 'the run in progress did not finish within the grace period; stopping anyway (the next run converges)');
      await server.close();
      unsubscribe();
      log.info({ finished }, 'stopped');
      const result: StopResult = { reason, finished, forced: false };
      resolveStopped(result);
      return result;
    })();
    return stopping$;
  };

  if (deps.signals !== null) {
    const source = deps.signals ?? process;
    let firstSignal: 'SIGTERM' | 'SIGINT' | undefined;
    unsubscribe = onSignals(source, {
      stop: (signal) => {
        if (firstSignal === undefined) {
          firstSignal = signal;
          void stop(signal);
          return;
        }
        log.warn({ signal }, 'second signal: exiting now');
        unsubscribe();
        resolveStopped({ reason: signal, finished: false, forced: true });
      },
      reload: () => {
        log.info('SIGHUP: reloading the settings and the file');
        loop.trigger('reload');
      },
    });
  }

  log.info(
    { url: server.url, file: options.file, schedule: runtime.schedule, mode: runtime.mode, debounceMs: runtime.debounceMs, ...(runtime.approvalsFile === undefined ? {} : { approvalsFile: runtime.approvalsFile }) },
    'daemon started',
  );
  loop.trigger('start');

  return {
    url: server.url,
    stopped,
    stop,
    status,
    trigger: (reason = 'file') => loop.trigger(reason),
    idle: () => loop.idle(),
  };
}

/** Ten minutes: a run of thousands of changes at a slow service fits; a wedged one does not. */
export const defaultRunDeadlineMs = 600_000;

function checkOptions(o: DaemonOptions): DaemonOptions {
  const bad = (name: string, expected: string, got: unknown) => new DaemonError('daemon_options', `Expected \`${name}\` to be ${expected}, got ${JSON.stringify(got)}`);
  if (typeof o.file !== 'string' || o.file === '') throw bad('file', 'a path', o.file);
  if (o.mode !== 'apply' && o.mode !== 'observe') throw bad('mode', "'apply' or 'observe'", o.mode);
  if (o.runDeadlineMs !== undefined && !(Number.isFinite(o.runDeadlineMs) && o.runDeadlineMs > 0)) throw bad('runDeadlineMs', 'a number of milliseconds above 0', o.runDeadlineMs);
  for (const key of ['debounceMs', 'shutdownGraceMs', 'invalidRecheckMs', 'watchPollMs'] as const) {
    const v = o[key];
    if (v !== undefined && !(Number.isFinite(v) && v >= 0)) throw bad(key, 'a number of milliseconds from 0 upwards', v);
  }
  if (o.invalidRecheckMs === 0) throw bad('invalidRecheckMs', 'a number of milliseconds above 0', 0);
  if (o.readiness && !(Number.isInteger(o.readiness.failureThreshold) && o.readiness.failureThreshold >= 1)) {
    throw bad('readiness.failureThreshold', 'an integer from 1 upwards', o.readiness.failureThreshold);
  }
  if (o.backoff && !(o.backoff.baseMs > 0 && o.backoff.maxMs >= o.backoff.baseMs)) throw bad('backoff', 'baseMs above 0 and maxMs from baseMs upwards', o.backoff);
  parseListen(o.listen);
  checkSchedule(o.schedule);
  return o;
}
