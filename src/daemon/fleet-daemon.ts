import { InvalidInputError } from '../errors.js';
import { desiredForTarget, Semaphore, type Target } from '../fleet/index.js';
import type { DesiredState, Diagnostic } from '../model/index.js';
import type { AmsyncMetrics, Logger } from '../obs/index.js';
import type { SyncOutcome } from '../sync/index.js';
import { systemTimers, type Timers } from '../time/index.js';
import { defaultBackoff } from './backoff.js';
import type { DaemonOptions, DaemonRuntimeOptions, StopResult } from './daemon.js';
import { defaultRunDeadlineMs } from './daemon.js';
import { errorForLog, formatDiagnostic, isInvalidInput } from './describe-error.js';
import { watchFiles as chokidarWatch, type FileWatch, type FileWatchFactory } from './file-watch.js';
import { createFleetTargetMetrics } from './fleet-metrics.js';
import { startHealthServer } from './health-server.js';
import { parseListen } from './listen-address.js';
import { defaultReadiness, liveness, readiness, type Readiness } from './readiness.js';
import { Reconciler } from './reconciler.js';
import { cronSchedule, checkSchedule, type Schedule, type ScheduleFactory } from './schedule.js';
import { onSignals, type SignalSource } from './signals.js';
import { SyncLoop, type TriggerReason } from './sync-loop.js';

/** What the fleet daemon reconciles: the targets it owns and the whole desired file. */
export interface FleetInput {
  /** The targets this replica owns (selected, and of its shard), in the file's order. */
  readonly targets: readonly Target[];
  readonly desired: DesiredState;
  /** The desired file, its secret files and the targets file: a change triggers every target. */
  readonly watchFiles: readonly string[];
  readonly warnings?: readonly Diagnostic[];
  /** Identifies this version of both files, so warnings are logged once per version. */
  readonly fileHash?: string;
}

/** One target's way to its service: a client kept across runs (its limiter and login). */
export interface TargetService {
  sync(desired: DesiredState, options: { dryRun: boolean; signal: AbortSignal }): Promise<SyncOutcome>;
  close(): void;
}

export interface FleetDaemonOptions extends DaemonOptions {
  /** The targets file; watched even while it does not load. */
  readonly targetsFile: string;
  /** Targets reconciled at once at most. */
  readonly targetConcurrency: number;
  /** This replica's shard, for /readyz (the targets were filtered already). */
  readonly shard?: { readonly index: number; readonly count: number };
}

export interface FleetDaemonDeps {
  /** Reads both files; throws InvalidInputError for either (the last good version is kept). */
  loadFleet(): Promise<FleetInput>;
  /** A target's service; opened when the target appears or its entry in the targets file changes. */
  openTarget(target: Target): TargetService;
  /** SIGHUP: re-read the settings; every target's service is opened again afterwards. */
  reloadSettings?(): Promise<Partial<DaemonRuntimeOptions> | void>;
  readonly logger: Logger;
  readonly metrics: AmsyncMetrics;
  readonly options: FleetDaemonOptions;
  readonly timers?: Timers;
  readonly random?: () => number;
  /** @default process; null: none */
  readonly signals?: SignalSource | null;
  readonly scheduler?: ScheduleFactory;
  readonly watcher?: FileWatchFactory;
  /**
   * The shard's Lease: false while another replica holds it. This replica then runs nothing
   * (a standby: it neither writes nor loads the services) until it holds it. @default true
   */
  readonly mayWrite?: () => boolean;
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

export interface FleetStatus extends Readiness {
  readonly leading: boolean;
  readonly shard?: { readonly index: number; readonly count: number };
  readonly configValid: boolean;
  readonly targets: readonly TargetReadiness[];
}

export interface RunningFleetDaemon {
  readonly url: string;
  readonly stopped: Promise<StopResult>;
  stop(reason?: StopResult['reason']): Promise<StopResult>;
  status(): FleetStatus;
  /** Asks every target for a run, as a file change would. */
  trigger(reason?: TriggerReason): void;
  /** Resolves when no run of any target, and no load of the files, is in progress. */
  idle(): Promise<void>;
}

/** A target's service, reconciler and loop: one per owned target, for as long as it is owned. */
interface TargetRunner {
  readonly target: Target;
  /** Its entry in the targets file: a change opens its service again. */
  readonly key: string;
  service: TargetService;
  readonly reconciler: Reconciler;
  readonly loop: SyncLoop;
  attempted: boolean;
}

/**
 * `amsync daemon --targets FILE`: every owned target reconciled at start, on every change of
 * either file, and on the schedule, each by a loop of its own (single flight, its own retry
 * backoff, its own run deadline) and at most `targetConcurrency` at once. A target that fails
 * or hangs is its own: it is retried, or abandoned at its deadline, while the others go on.
 * The files are read once per trigger, for every target; an invalid edit keeps the last good
 * version (planned, not applied), as for one service.
 */
export async function startFleetDaemon(deps: FleetDaemonDeps): Promise<RunningFleetDaemon> {
  const options = deps.options;
  checkFleetOptions(options);
  const timers = deps.timers ?? systemTimers;
  const log = deps.logger;
  const metrics = deps.metrics;
  const targetMetrics = createFleetTargetMetrics(metrics.registry, metrics);
  const scheduler = deps.scheduler ?? cronSchedule;
  const runtime: { -readonly [K in keyof DaemonRuntimeOptions]: DaemonRuntimeOptions[K] } = {
    schedule: options.schedule,
    mode: options.mode,
    debounceMs: options.debounceMs,
    shutdownGraceMs: options.shutdownGraceMs,
    runDeadlineMs: options.runDeadlineMs ?? defaultRunDeadlineMs,
  };
  const slots = new Semaphore(options.targetConcurrency);
  const runners = new Map<string, TargetRunner>();
  const mayWrite = () => deps.mayWrite?.() !== false;
  let input: FleetInput | undefined;
  let inputValid = true;
  let warnedFor: string | undefined;
  let stopping = false;
  let watch: FileWatch | undefined;
  let schedule: Schedule | undefined;
  let recheckHandle: unknown;
  let reopenAll = false;

  /** The target's part of the last good files; while they are invalid, an error its reconciler keeps the last good version for. */
  const loadFor = (name: string) => async () => {
    const current = input;
    const target = current?.targets.find((t) => t.name === name);
    if (!inputValid || current === undefined || target === undefined) {
      // The findings were logged once for the fleet: no copy per target.
      throw new InvalidInputError('the desired-state file or the targets file is invalid (see the fleet log); the last good version is kept', [], 'fleet_input_invalid');
    }
    return { desired: desiredForTarget(current.desired, target), watchFiles: [] };
  };

  function addRunner(target: Target): TargetRunner {
    const targetLog = log.child({ target: target.name });
    const tm = targetMetrics.forTarget(target.name);
    const runner: TargetRunner = {
      target,
      key: targetKey(target),
      service: deps.openTarget(target),
      attempted: false,
      reconciler: new Reconciler({
        loadDesired: loadFor(target.name),
        sync: (desired, o) => runner.service.sync(desired, o),
        logger: targetLog,
        metrics: tm,
        timers,
        mode: () => (mayWrite() ? runtime.mode : 'observe'),
        runDeadlineMs: () => runtime.runDeadlineMs ?? defaultRunDeadlineMs,
        onWatchFiles: () => undefined,
      }),
      loop: new SyncLoop({
        run: async (reasons) => {
          // A standby (another replica holds the shard's Lease) runs nothing; leading again triggers every target.
          if (!mayWrite() || stopping) return { retry: false };
          await slots.acquire();
          try {
            const verdict = await runner.reconciler.run(reasons);
            runner.attempted = true;
            tm.setReady(targetReadiness(runner).ready);
            metrics.setReady(status().ready);
            return verdict;
          } finally {
            slots.release();
          }
        },
        timers,
        backoff: options.backoff ?? defaultBackoff,
        random: deps.random ?? Math.random,
        onRetryScheduled: (delayMs, failures) => targetLog.warn({ delayMs, failures }, 'the run failed; retrying with backoff unless something else triggers a run first'),
        onRunError: (error) => targetLog.error({ err: errorForLog(error) }, 'run failed unexpectedly'),
      }),
    };
    runners.set(target.name, runner);
    return runner;
  }

  async function removeRunner(runner: TargetRunner): Promise<void> {
    runners.delete(runner.target.name);
    targetMetrics.removeTarget(runner.target.name);
    await runner.loop.stop();
    runner.service.close();
  }

  /** The owned targets as the files now say: new ones start, gone ones stop, changed ones reopen. */
  async function applyTargets(targets: readonly Target[]): Promise<TargetRunner[]> {
    const wanted = new Map(targets.map((t) => [t.name, t]));
    for (const runner of [...runners.values()]) {
      if (!wanted.has(runner.target.name)) {
        log.info({ target: runner.target.name }, 'target removed (from the targets file, or from this shard); no longer reconciled');
        await removeRunner(runner);
      }
    }
    const fresh: TargetRunner[] = [];
    for (const target of targets) {
      const runner = runners.get(target.name);
      if (runner === undefined) {
        fresh.push(addRunner(target));
        continue;
      }
      if (runner.key !== targetKey(target) || reopenAll) {
        // Its URL, credential or overrides changed: a new client, once its run in progress is over.
        await runner.loop.stop();
        runner.service.close();
        runners.delete(target.name);
        const next = addRunner(target);
        next.attempted = runner.attempted;
        fresh.push(next);
      }
    }
    reopenAll = false;
    targetMetrics.setOwnedTargets(runners.size);
    return fresh;
  }

  async function loadInput(): Promise<void> {
    try {
      const loaded = await deps.loadFleet();
      if (!inputValid) log.info('the desired-state file and the targets file are valid again');
      if (loaded.warnings && loaded.warnings.length > 0 && (loaded.fileHash === undefined || loaded.fileHash !== warnedFor)) {
        warnedFor = loaded.fileHash;
        for (const d of loaded.warnings.slice(0, 50)) log.warn({ code: d.code, ...(d.position ?? {}) }, formatDiagnostic(d));
      }
      input = loaded;
      inputValid = true;
      await applyTargets(loaded.targets);
      watch?.setFiles([options.file, options.targetsFile, ...loaded.watchFiles]).catch((error: unknown) => log.warn({ err: errorForLog(error) }, 'could not update the watched files'));
    } catch (error) {
      inputValid = false;
      const keeping = input ? 'keeping the last good version: targets are planned, nothing is applied until it is fixed' : 'no good version yet: nothing is synced until it is fixed';
      if (isInvalidInput(error)) {
        log.error({ errors: error.diagnostics.filter((d) => d.severity === 'error').length }, `${error.message}; ${keeping}`);
        for (const d of error.diagnostics.slice(0, 50)) log.error({ code: d.code, ...(d.position ?? {}) }, formatDiagnostic(d));
      } else {
        log.error({ err: errorForLog(error) }, `could not load the desired-state file or the targets file; ${keeping}`);
      }
    }
    metrics.setConfigValid(inputValid);
  }

  /** Loads the files once, then asks every target for a run. */
  const fleetLoop = new SyncLoop({
    run: async (reasons) => {
      if (reasons.includes('reload') && deps.reloadSettings) {
        try {
          const changes = (await deps.reloadSettings()) ?? {};
          applyRuntime(changes);
          reopenAll = true;
          log.info('settings reloaded; every target opens its service again');
        } catch (error) {
          log.error({ err: errorForLog(error) }, 'could not reload the settings; keeping the previous settings');
        }
      }
      await loadInput();
      armRecheck();
      for (const runner of runners.values()) for (const reason of reasons) runner.loop.trigger(reason);
      metrics.setReady(status().ready);
      return { retry: false };
    },
    timers,
    backoff: options.backoff ?? defaultBackoff,
    random: deps.random ?? Math.random,
    onRunError: (error) => log.error({ err: errorForLog(error) }, 'loading the fleet failed unexpectedly'),
  });

  function applyRuntime(changes: Partial<DaemonRuntimeOptions>): void {
    if (changes.mode) runtime.mode = changes.mode;
    if (changes.shutdownGraceMs !== undefined) runtime.shutdownGraceMs = changes.shutdownGraceMs;
    if (changes.runDeadlineMs !== undefined) runtime.runDeadlineMs = changes.runDeadlineMs;
    if (changes.debounceMs !== undefined) {
      runtime.debounceMs = changes.debounceMs;
      watch?.setDebounce(changes.debounceMs);
    }
    if (changes.schedule && changes.schedule !== runtime.schedule && !stopping) {
      try {
        const previous = schedule;
        schedule = scheduler(changes.schedule, () => fleetLoop.trigger('schedule'), log);
        void previous?.stop();
        runtime.schedule = changes.schedule;
      } catch (error) {
        log.error({ err: errorForLog(error) }, 'the new schedule is invalid; keeping the previous one');
      }
    }
  }

  function armRecheck(): void {
    if (recheckHandle !== undefined) timers.clearTimeout(recheckHandle);
    recheckHandle = undefined;
    if (stopping || inputValid) return;
    recheckHandle = timers.setTimeout(() => {
      recheckHandle = undefined;
      void deps
        .loadFleet()
        .then(() => !stopping && fleetLoop.trigger('file'))
        .catch(() => armRecheck());
    }, options.invalidRecheckMs ?? 10_000);
  }

  function targetReadiness(runner: TargetRunner): Readiness {
    const s = runner.reconciler.status();
    if (!runner.attempted) return { ready: false, reason: 'no run yet' };
    return readiness({ ...s, stopping: false, mode: runtime.mode }, options.readiness ?? defaultReadiness);
  }

  function status(): FleetStatus {
    const leading = mayWrite();
    const list = [...runners.values()];
    const targets = list.map((r): TargetReadiness => {
      const s = r.reconciler.status();
      const rd = targetReadiness(r);
      return {
        name: r.target.name,
        url: r.target.url,
        ready: rd.ready,
        reason: rd.reason,
        attempted: r.attempted,
        running: s.running,
        lastOutcome: s.lastOutcome ?? null,
        lastSuccessAt: s.lastSuccessAt === undefined ? null : new Date(s.lastSuccessAt).toISOString(),
        consecutiveFailures: s.consecutiveFailures,
      };
    });
    const base = { leading, ...(options.shard ? { shard: options.shard } : {}), configValid: inputValid, targets };
    if (stopping) return { ...base, ready: false, reason: 'shutting down' };
    if (input === undefined) return { ...base, ready: false, reason: inputValid ? 'loading the targets file and the desired-state file' : 'the targets file or the desired-state file is invalid and no good version has been loaded yet' };
    if (!leading) return { ...base, ready: true, reason: `standby: another replica holds this shard's Lease; nothing is run here until it is released or expires` };
    const waiting = targets.filter((t) => !t.attempted).length;
    if (waiting > 0) return { ...base, ready: false, reason: `waiting for the first run of ${waiting} of ${targets.length} targets` };
    const failing = targets.filter((t) => !t.ready);
    const notes = [failing.length > 0 ? `${failing.length} of ${targets.length} targets not ready: ${failing.slice(0, 10).map((t) => t.name).join(', ')}${failing.length > 10 ? ', …' : ''}` : '', inputValid ? '' : 'a file is invalid: the last good version is kept'].filter(Boolean);
    return { ...base, ready: true, reason: notes.length === 0 ? `ok (${targets.length} targets)` : `ok (${notes.join('; ')})` };
  }

  const stuck = () => [...runners.values()].find((r) => r.reconciler.status().stuck);
  const server = await startHealthServer({
    address: parseListen(options.listen),
    readiness: () => status(),
    readinessJson: () => {
      const { ready: _r, reason: _reason, ...rest } = status();
      return rest;
    },
    liveness: () => {
      const wedged = stuck();
      return wedged ? { ready: false, reason: `target ${wedged.target.name}: ${liveness(wedged.reconciler.status()).reason}` } : { ready: true, reason: 'ok' };
    },
    metrics: () => metrics.render(),
    logger: log,
  });

  try {
    watch = await (deps.watcher ?? chokidarWatch)({
      files: [options.file, options.targetsFile],
      debounceMs: runtime.debounceMs,
      onChange: (files) => {
        log.info({ files }, 'watched file changed');
        fleetLoop.trigger('file');
      },
      logger: log,
      timers,
      ...(options.watchPollMs === undefined ? {} : { pollMs: options.watchPollMs }),
    });
  } catch (error) {
    log.warn({ err: errorForLog(error) }, 'cannot watch the files; changes are picked up at the next scheduled run');
  }
  try {
    schedule = scheduler(runtime.schedule, () => fleetLoop.trigger('schedule'), log);
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
  const idle = async (): Promise<void> => {
    await fleetLoop.idle();
    await Promise.all([...runners.values()].map((r) => r.loop.idle()));
  };
  const stop = (reason: StopResult['reason'] = 'stop'): Promise<StopResult> => {
    stopping$ ??= (async () => {
      stopping = true;
      metrics.setReady(false);
      if (recheckHandle !== undefined) timers.clearTimeout(recheckHandle);
      log.info({ reason, graceMs: runtime.shutdownGraceMs }, 'stopping');
      const all = Promise.all([fleetLoop.stop(), ...[...runners.values()].map((r) => r.loop.stop())]);
      await Promise.allSettled([schedule?.stop(), watch?.close()]);
      let graceHandle: unknown;
      const finished = await Promise.race([
        all.then(() => true),
        new Promise<boolean>((resolve) => {
          graceHandle = timers.setTimeout(() => resolve(false), runtime.shutdownGraceMs);
        }),
      ]);
      timers.clearTimeout(graceHandle);
      if (!finished) log.error({ graceMs: runtime.shutdownGraceMs }, 'runs in progress did not finish within the grace period; stopping anyway (the next run converges)');
      for (const runner of runners.values()) runner.service.close();
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
    let first: 'SIGTERM' | 'SIGINT' | undefined;
    unsubscribe = onSignals(deps.signals ?? process, {
      stop: (signal) => {
        if (first === undefined) {
          first = signal;
          void stop(signal);
          return;
        }
        log.warn({ signal }, 'second signal: exiting now');
        unsubscribe();
        resolveStopped({ reason: signal, finished: false, forced: true });
      },
      reload: () => {
        log.info('SIGHUP: reloading the settings and the files');
        fleetLoop.trigger('reload');
      },
    });
  }

  log.info({ url: server.url, file: options.file, targets: options.targetsFile, schedule: runtime.schedule, mode: runtime.mode, targetConcurrency: options.targetConcurrency, ...(options.shard ? { shard: `${options.shard.index}/${options.shard.count}` } : {}) }, 'fleet daemon started');
  fleetLoop.trigger('start');

  return {
    url: server.url,
    stopped,
    stop,
    status,
    trigger: (reason = 'file') => fleetLoop.trigger(reason),
    idle,
  };
}

/** A target's entry as it shapes its service; a credential's value is compared, never shown. */
function targetKey(target: Target): string {
  const c = target.credentials;
  const credential = c === undefined ? '' : c.kind === 'token' ? `token:${c.token.reveal()}` : c.kind === 'integratorKey' ? `key:${c.refreshToken.reveal()}` : c.kind === 'tokenFile' ? `tokenFile:${c.tokenFile}` : `keyFile:${c.refreshTokenFile}`;
  return JSON.stringify([target.url, credential, target.overrides]);
}

function checkFleetOptions(o: FleetDaemonOptions): void {
  if (!Number.isInteger(o.targetConcurrency) || o.targetConcurrency < 1) {
    throw new RangeError(`Expected \`targetConcurrency\` to be an integer from 1 upwards, got ${JSON.stringify(o.targetConcurrency)}`);
  }
  parseListen(o.listen);
  checkSchedule(o.schedule);
}
