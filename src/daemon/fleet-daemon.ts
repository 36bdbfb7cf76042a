import type { CredentialHandover } from '../api/index.js';
import { InvalidInputError } from '../errors.js';
import { desiredForTarget, Semaphore, type Target } from '../fleet/index.js';
import type { DesiredState, Diagnostic, NotifyEvent } from '../model/index.js';
import type { AmsyncMetrics, Logger } from '../obs/index.js';
import { systemTimers, type Timers } from '../time/index.js';
import { defaultBackoff } from './backoff.js';
import { DaemonLifecycle, type ShutdownSteps, type StartedDaemon } from './daemon-lifecycle.js';
import { defaultRunDeadlineMs, initialRuntime, type DaemonOptions, type DaemonRuntimeOptions, type MutableRuntimeOptions } from './daemon-options.js';
import { errorForLog, formatDiagnostic, isInvalidInput } from './describe-error.js';
import type { FileWatchFactory } from './file-watch.js';
import { createFleetTargetMetrics, type FleetTargetMetrics } from './fleet-metrics.js';
import { InputRecheck } from './input-recheck.js';
import { parseListen } from './listen-address.js';
import { defaultReadiness, liveness, type Readiness } from './readiness.js';
import type { LoadedInput } from './reconciler.js';
import { checkSchedule, type ScheduleFactory } from './schedule.js';
import type { SignalSource } from './signals.js';
import { SyncLoop, type RunVerdict, type TriggerReason } from './sync-loop.js';
import { TargetRunner, targetKey, type TargetReadiness, type TargetRunnerContext, type TargetService } from './target-runner.js';

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
  /** Told of each target's drift, applied changes and failures (the webhooks; events name the target); never blocks. */
  notify?(event: NotifyEvent): void;
  /** A target's service; opened when the target appears or its entry in the targets file changes. */
  openTarget(target: Target, credentialFrom?: CredentialHandover): TargetService;
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

export interface FleetStatus extends Readiness {
  readonly leading: boolean;
  readonly shard?: { readonly index: number; readonly count: number };
  readonly configValid: boolean;
  readonly targets: readonly TargetReadiness[];
}

/** The started fleet daemon: its handle (daemon-lifecycle.ts); `idle` waits for every target. */
export type RunningFleetDaemon = StartedDaemon<FleetStatus>;


/**
 * `amsync daemon --targets FILE`: every owned target reconciled at start, on every change of
 * either file, and on the schedule, each by a loop of its own (single flight, its own retry
 * backoff, its own run deadline) and at most `targetConcurrency` at once. A target that fails
 * or hangs is its own: it is retried, or abandoned at its deadline, while the others go on.
 * The files are read once per trigger, for every target; an invalid edit keeps the last good
 * version (planned, not applied), as for one service.
 */
export async function startFleetDaemon(deps: FleetDaemonDeps): Promise<RunningFleetDaemon> {
  return new FleetDaemon(deps).start();
}

/**
 * startFleetDaemon's steps, over the state they share: the last good files, and a runner per
 * owned target. The fleet's own loop loads the files once per trigger and passes the trigger
 * on to every target's loop.
 */
class FleetDaemon {
  readonly #deps: FleetDaemonDeps;
  readonly #options: FleetDaemonOptions;
  readonly #log: Logger;
  readonly #timers: Timers;
  readonly #targetMetrics: FleetTargetMetrics;
  /** What a reload (SIGHUP) changes in place. */
  readonly #runtime: MutableRuntimeOptions;
  readonly #runners = new Map<string, TargetRunner>();
  readonly #runnerContext: TargetRunnerContext;
  readonly #lifecycle: DaemonLifecycle;
  readonly #fleetLoop: SyncLoop;
  readonly #recheck: InputRecheck;
  /** The last good files. */
  #input: FleetInput | undefined;
  #inputValid = true;
  /** The version of the files whose warnings were logged. */
  #warnedFor: string | undefined;
  /** The settings were reloaded: every target opens its service again at the next load. */
  #reopenAll = false;

  /** Throws RangeError or DaemonError when an option is wrong. */
  constructor(deps: FleetDaemonDeps) {
    checkFleetOptions(deps.options);
    this.#deps = deps;
    this.#options = deps.options;
    this.#log = deps.logger;
    this.#timers = deps.timers ?? systemTimers;
    this.#targetMetrics = createFleetTargetMetrics(deps.metrics.registry, deps.metrics);
    this.#runtime = initialRuntime(this.#options);
    this.#runnerContext = this.#createRunnerContext();
    this.#lifecycle = new DaemonLifecycle({
      logger: this.#log,
      timers: this.#timers,
      metrics: deps.metrics,
      scheduler: deps.scheduler,
      watcher: deps.watcher,
      shutdown: this.#shutdownSteps(),
    });
    this.#fleetLoop = new SyncLoop({
      run: (reasons) => this.#runFleet(reasons),
      timers: this.#timers,
      backoff: this.#options.backoff ?? defaultBackoff,
      random: deps.random ?? Math.random,
      onRunError: (error) => this.#log.error({ err: errorForLog(error) }, 'loading the fleet failed unexpectedly'),
    });
    this.#recheck = new InputRecheck({
      timers: this.#timers,
      intervalMs: this.#options.invalidRecheckMs ?? 10_000,
      isValid: () => this.#inputValid,
      probe: () => deps.loadFleet().then(() => true, () => false),
      onValid: () => this.#fleetLoop.trigger('file'),
      stopping: () => this.#lifecycle.stopping,
    });
  }

  /** Serve, watch, schedule, listen for signals, then ask for the first run. */
  async start(): Promise<RunningFleetDaemon> {
    const options = this.#options;
    return this.#lifecycle.start({
      endpoints: {
        listen: options.listen,
        readiness: () => this.#status(),
        readinessJson: () => {
          const { ready: _r, reason: _reason, ...rest } = this.#status();
          return rest;
        },
        liveness: () => this.#liveness(),
      },
      watch: { files: [options.file, options.targetsFile], debounceMs: this.#runtime.debounceMs, pollMs: options.watchPollMs },
      schedule: this.#runtime.schedule,
      signals: this.#deps.signals,
      reloads: 'files',
      // A trigger goes to the fleet's loop (which passes it on); idle waits for every target too.
      loop: { trigger: (reason) => this.#fleetLoop.trigger(reason), idle: () => this.#idle() },
      status: () => this.#status(),
      logStarted: (url) => this.#logStarted(url),
    });
  }

  #createRunnerContext(): TargetRunnerContext {
    const deps = this.#deps;
    // Made before the lifecycle: read when a run asks for it.
    const lifecycle = (): DaemonLifecycle => this.#lifecycle;
    return {
      logger: this.#log,
      metrics: this.#targetMetrics,
      timers: this.#timers,
      backoff: this.#options.backoff ?? defaultBackoff,
      random: deps.random ?? Math.random,
      slots: new Semaphore(this.#options.targetConcurrency),
      readiness: this.#options.readiness ?? defaultReadiness,
      openTarget: (target, credentialFrom) => deps.openTarget(target, credentialFrom),
      notify: (event) => deps.notify?.(event),
      loadTarget: (name) => this.#loadTarget(name),
      mode: () => this.#runtime.mode,
      mayWrite: () => this.#mayWrite(),
      stopping: () => this.#lifecycle.stopping,
      get stopSignal(): AbortSignal {
        return lifecycle().stopSignal;
      },
      runDeadlineMs: () => this.#runtime.runDeadlineMs ?? defaultRunDeadlineMs,
      afterRun: () => this.#deps.metrics.setReady(this.#status().ready),
    };
  }

  #mayWrite(): boolean {
    return this.#deps.mayWrite?.() !== false;
  }

  /** The fleet loop's run: reload the settings if asked, load the files once, then ask every target for a run. */
  async #runFleet(reasons: readonly TriggerReason[]): Promise<RunVerdict> {
    if (reasons.includes('reload') && this.#deps.reloadSettings) await this.#reloadSettings(this.#deps.reloadSettings);
    await this.#loadInput();
    this.#recheck.arm();
    for (const runner of this.#runners.values()) for (const reason of reasons) runner.loop.trigger(reason);
    this.#deps.metrics.setReady(this.#status().ready);
    return { retry: false };
  }

  async #reloadSettings(read: NonNullable<FleetDaemonDeps['reloadSettings']>): Promise<void> {
    try {
      const changes = (await read()) ?? {};
      this.#applyRuntime(changes);
      this.#reopenAll = true;
      this.#log.info('settings reloaded; every target opens its service again');
    } catch (error) {
      this.#log.error({ err: errorForLog(error) }, 'could not reload the settings; keeping the previous settings');
    }
  }

  #applyRuntime(changes: Partial<DaemonRuntimeOptions>): void {
    const runtime = this.#runtime;
    if (changes.mode) runtime.mode = changes.mode;
    if (changes.shutdownGraceMs !== undefined) runtime.shutdownGraceMs = changes.shutdownGraceMs;
    if (changes.runDeadlineMs !== undefined) runtime.runDeadlineMs = changes.runDeadlineMs;
    if (changes.debounceMs !== undefined) {
      runtime.debounceMs = changes.debounceMs;
      this.#lifecycle.setDebounce(changes.debounceMs);
    }
    if (changes.schedule && changes.schedule !== runtime.schedule && !this.#lifecycle.stopping) {
      try {
        void this.#lifecycle.replaceSchedule(changes.schedule, () => this.#fleetLoop.trigger('schedule'));
        runtime.schedule = changes.schedule;
      } catch (error) {
        this.#log.error({ err: errorForLog(error) }, 'the new schedule is invalid; keeping the previous one');
      }
    }
  }

  /** Both files, once for every target; an invalid edit keeps the last good version. */
  async #loadInput(): Promise<void> {
    try {
      await this.#acceptInput(await this.#deps.loadFleet());
    } catch (error) {
      this.#inputValid = false;
      this.#logInvalidInput(error);
    }
    this.#deps.metrics.setConfigValid(this.#inputValid);
  }

  async #acceptInput(loaded: FleetInput): Promise<void> {
    const log = this.#log;
    if (!this.#inputValid) log.info('the desired-state file and the targets file are valid again');
    if (loaded.warnings && loaded.warnings.length > 0 && (loaded.fileHash === undefined || loaded.fileHash !== this.#warnedFor)) {
      this.#warnedFor = loaded.fileHash;
      for (const d of loaded.warnings.slice(0, 50)) log.warn({ code: d.code, ...(d.position ?? {}) }, formatDiagnostic(d));
    }
    this.#input = loaded;
    this.#inputValid = true;
    await this.#applyTargets(loaded.targets);
    this.#lifecycle.setWatchedFiles([this.#options.file, this.#options.targetsFile, ...loaded.watchFiles]);
  }

  #logInvalidInput(error: unknown): void {
    const log = this.#log;
    const keeping = this.#input ? 'keeping the last good version: targets are planned, nothing is applied until it is fixed' : 'no good version yet: nothing is synced until it is fixed';
    if (isInvalidInput(error)) {
      log.error({ errors: error.diagnostics.filter((d) => d.severity === 'error').length }, `${error.message}; ${keeping}`);
      for (const d of error.diagnostics.slice(0, 50)) log.error({ code: d.code, ...(d.position ?? {}) }, formatDiagnostic(d));
    } else {
      log.error({ err: errorForLog(error) }, `could not load the desired-state file or the targets file; ${keeping}`);
    }
  }

  /** The target's part of the last good files; while they are invalid, an error its reconciler keeps the last good version for. */
  async #loadTarget(name: string): Promise<LoadedInput> {
    const current = this.#input;
    const target = current?.targets.find((t) => t.name === name);
    if (!this.#inputValid || current === undefined || target === undefined) {
      // The findings were logged once for the fleet: no copy per target.
      throw new InvalidInputError('the desired-state file or the targets file is invalid (see the fleet log); the last good version is kept', [], 'fleet_input_invalid');
    }
    return { desired: desiredForTarget(current.desired, target), watchFiles: [] };
  }

  /** The owned targets as the files now say: new ones start, gone ones stop, changed ones reopen. */
  async #applyTargets(targets: readonly Target[]): Promise<void> {
    const wanted = new Map(targets.map((t) => [t.name, t]));
    for (const runner of [...this.#runners.values()]) {
      if (!wanted.has(runner.target.name)) {
        this.#log.info({ target: runner.target.name }, 'target removed (from the targets file, or from this shard); no longer reconciled');
        await this.#removeRunner(runner);
      }
    }
    for (const target of targets) {
      const runner = this.#runners.get(target.name);
      if (runner === undefined) this.#addRunner(target);
      else if (runner.key !== targetKey(target) || this.#reopenAll) await this.#reopenRunner(runner, target);
    }
    this.#reopenAll = false;
    this.#targetMetrics.setOwnedTargets(this.#runners.size);
  }

  #addRunner(target: Target, credentialFrom?: CredentialHandover): TargetRunner {
    const runner = new TargetRunner(target, this.#runnerContext, credentialFrom);
    this.#runners.set(target.name, runner);
    return runner;
  }

  async #removeRunner(runner: TargetRunner): Promise<void> {
    this.#runners.delete(runner.target.name);
    this.#targetMetrics.removeTarget(runner.target.name);
    await runner.stop();
  }

  /** Its URL, credential or overrides changed (or the settings): a new client, once its run in progress is over. */
  async #reopenRunner(runner: TargetRunner, target: Target): Promise<void> {
    // The integrator key goes over as it stands: one rotated since the file was last written
    // (a key file that could not be written) is in memory only, and the file holds a retired one.
    const credentialFrom = await runner.stopAndHandOver();
    this.#runners.delete(target.name);
    this.#addRunner(target, credentialFrom).attempted = runner.attempted;
  }

  #status(): FleetStatus {
    const leading = this.#mayWrite();
    const targets = [...this.#runners.values()].map((r) => r.describe());
    const base = { leading, ...(this.#options.shard ? { shard: this.#options.shard } : {}), configValid: this.#inputValid, targets };
    const state = { stopping: this.#lifecycle.stopping, loaded: this.#input !== undefined, inputValid: this.#inputValid, leading };
    return { ...base, ...fleetReadiness(state, targets) };
  }

  /** /healthz: not while a target's run, abandoned at its deadline, hangs on. */
  #liveness(): Readiness {
    const wedged = [...this.#runners.values()].find((r) => r.reconciler.status().stuck);
    return wedged ? { ready: false, reason: `target ${wedged.target.name}: ${liveness(wedged.reconciler.status()).reason}` } : { ready: true, reason: 'ok' };
  }

  async #idle(): Promise<void> {
    await this.#fleetLoop.idle();
    await Promise.all([...this.#runners.values()].map((r) => r.loop.idle()));
  }

  #shutdownSteps(): ShutdownSteps {
    return {
      graceMs: () => this.#runtime.shutdownGraceMs,
      onStopping: (reason, graceMs) => {
        this.#recheck.cancel();
        // The stop signal has fired: runs send nothing more; what is counted here was on the wire, and finishes.
        let sent = 0;
        for (const runner of this.#runners.values()) sent += runner.service.onWire?.() ?? 0;
        this.#log.info({ reason, graceMs, sent }, 'stopping');
      },
      stopRuns: () => Promise.all([this.#fleetLoop.stop(), ...[...this.#runners.values()].map((r) => r.loop.stop())]),
      unfinishedMessage: 'runs in progress did not finish within the grace period; stopping anyway (the next run converges)',
      release: () => {
        for (const runner of this.#runners.values()) runner.service.close();
      },
    };
  }

  #logStarted(url: string): void {
    const options = this.#options;
    const { schedule, mode } = this.#runtime;
    const shard = options.shard ? { shard: `${options.shard.index}/${options.shard.count}` } : {};
    this.#log.info({ url, file: options.file, targets: options.targetsFile, schedule, mode, targetConcurrency: options.targetConcurrency, ...shard }, 'fleet daemon started');
  }
}

/** The fleet's readiness, from its state and its targets' (a standby is ready: it has nothing to run). */
function fleetReadiness(state: { stopping: boolean; loaded: boolean; inputValid: boolean; leading: boolean }, targets: readonly TargetReadiness[]): Readiness {
  if (state.stopping) return { ready: false, reason: 'shutting down' };
  if (!state.loaded) return { ready: false, reason: state.inputValid ? 'loading the targets file and the desired-state file' : 'the targets file or the desired-state file is invalid and no good version has been loaded yet' };
  if (!state.leading) return { ready: true, reason: `standby: another replica holds this shard's Lease; nothing is run here until it is released or expires` };
  const waiting = targets.filter((t) => !t.attempted).length;
  if (waiting > 0) return { ready: false, reason: `waiting for the first run of ${waiting} of ${targets.length} targets` };
  const failing = targets.filter((t) => !t.ready);
  const notes = [failing.length > 0 ? `${failing.length} of ${targets.length} targets not ready: ${failing.slice(0, 10).map((t) => t.name).join(', ')}${failing.length > 10 ? ', …' : ''}` : '', state.inputValid ? '' : 'a file is invalid: the last good version is kept'].filter(Boolean);
  return { ready: true, reason: notes.length === 0 ? `ok (${targets.length} targets)` : `ok (${notes.join('; ')})` };
}

function checkFleetOptions(o: FleetDaemonOptions): void {
  if (!Number.isInteger(o.targetConcurrency) || o.targetConcurrency < 1) {
    throw new RangeError(`Expected \`targetConcurrency\` to be an integer from 1 upwards, got ${JSON.stringify(o.targetConcurrency)}`);
  }
  parseListen(o.listen);
  checkSchedule(o.schedule);
}
