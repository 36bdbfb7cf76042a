import type { CredentialHandover } from '../api/index.js';
import type { AuditControlEntry } from '../app/index.js';
import { InvalidInputError } from '../errors.js';
import { desiredForTarget, Semaphore, type Target } from '../fleet/index.js';
import { formatDiagnostic, type DesiredState, type Diagnostic, type NotifyEvent } from '../model/index.js';
import type { AmsyncMetrics, Logger } from '../obs/index.js';
import type { Timers } from '../time/index.js';
import { Daemon, type DaemonTargets } from './daemon.js';
import type { StartedDaemon, StopResult } from './daemon-lifecycle.js';
import { initialRuntime, type DaemonOptions, type DaemonRuntimeOptions } from './daemon-options.js';
import { errorForLog, isInvalidInput } from './describe-error.js';
import type { FileWatchFactory } from './file-watch.js';
import { parseListen } from './listen-address.js';
import { defaultReadiness, liveness, readiness, type Readiness } from './readiness.js';
import type { LoadedInput } from './reconciler.js';
import { checkSchedule, type ScheduleFactory } from './schedule.js';
import type { SignalSource } from './signals.js';
import type { TriggerReason } from './sync-loop.js';
import { createTargetMetrics, type TargetMetrics } from './target-metrics.js';
import { TargetRunner, type TargetService } from './target-runner.js';
import type { TargetReadinessFacts } from './status-snapshot.js';

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
  /** Writes the fleet's control lines to the audit log (suspend, resume, windows, override; target null). */
  audit?(entry: AuditControlEntry): void;
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
  /**
   * Why runs observe only now: `suspended: REASON since T` (amsync ctl suspend) or a sync
   * window, as for one service; absent when they may write. The fleet stays ready.
   */
  readonly writesHeld?: string;
}

/** The started daemon of a targets file: its handle (daemon-lifecycle.ts); `idle` waits for every target. */
export type RunningFleetDaemon = StartedDaemon<FleetStatus>;


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

/**
 * `amsync daemon --targets FILE`: the daemon (daemon.ts) of the targets a targets file lists.
 * Every owned target is reconciled at start, on every change of either file, and on the
 * schedule, each by its own runner (single flight, its own retry backoff, its own run deadline)
 * and at most `targetConcurrency` at once. A target that fails or hangs is its own: it is
 * retried, or abandoned at its deadline, while the others go on. The files are read once per
 * trigger, for every target; an invalid edit keeps the last good version (planned, not
 * applied), as for one service.
 */
export async function startFleetDaemon(deps: FleetDaemonDeps): Promise<RunningFleetDaemon> {
  checkFleetOptions(deps.options);
  const options = deps.options;
  const parts = { logger: deps.logger, metrics: deps.metrics, notify: deps.notify, audit: deps.audit?.bind(deps), options, runtime: initialRuntime(options), logsChanges: false, timers: deps.timers, random: deps.random, signals: deps.signals, scheduler: deps.scheduler, watcher: deps.watcher };
  return new Daemon<FleetStatus>(parts, (daemon) => new TargetsFile(daemon, deps)).start();
}

/**
 * The targets of a targets file, as the daemon runs them: the last good files, read once per
 * trigger before the targets run, and a runner per owned target (its series labelled with its
 * name). A target that appears gets a runner, one that goes loses it, one whose entry changed
 * (or after a settings reload) gets a new service once its run in progress is over.
 */
class TargetsFile implements DaemonTargets<FleetStatus> {
  readonly reloads = 'files';
  readonly fleet = true;
  readonly refreshFailedMessage = 'loading the fleet failed unexpectedly';
  readonly unfinishedMessage = 'runs in progress did not finish within the grace period; stopping anyway (the next run converges)';
  readonly watched: readonly string[];
  readonly #daemon: Daemon<FleetStatus>;
  readonly #deps: FleetDaemonDeps;
  readonly #options: FleetDaemonOptions;
  readonly #log: Logger;
  readonly #metrics: TargetMetrics;
  readonly #slots: Semaphore;
  /** The entry in the targets file of each runner, by name. */
  readonly #entries = new Map<string, Target>();
  /** The last good files. */
  #input: FleetInput | undefined;
  #inputValid = true;
  /** The version of the files whose warnings were logged. */
  #warnedFor: string | undefined;
  /** The settings were reloaded: every target opens its service again at the next load. */
  #reopenAll = false;

  constructor(daemon: Daemon<FleetStatus>, deps: FleetDaemonDeps) {
    this.#daemon = daemon;
    this.#deps = deps;
    this.#options = deps.options;
    this.#log = daemon.log;
    this.#metrics = createTargetMetrics(deps.metrics.registry, deps.metrics);
    this.#slots = new Semaphore(deps.options.targetConcurrency);
    this.watched = [deps.options.file, deps.options.targetsFile];
  }

  /** Reload the settings if asked, then load the files once for every target. */
  async refresh(reasons: readonly TriggerReason[]): Promise<void> {
    if (reasons.includes('reload') && this.#deps.reloadSettings) await this.#reloadSettings(this.#deps.reloadSettings);
    await this.#loadInput();
  }

  inputValid(): boolean {
    return this.#inputValid;
  }

  probeInput(): Promise<boolean> {
    return this.#deps.loadFleet().then(
      () => true,
      () => false,
    );
  }

  status(): FleetStatus {
    const leading = this.#mayWrite();
    const targets = [...this.#daemon.runners.entries()].map(([name, runner]) => this.#describe(this.#entries.get(name)!, runner));
    const held = this.#daemon.gate.held();
    const base = { leading, ...(this.#options.shard ? { shard: this.#options.shard } : {}), configValid: this.#inputValid, targets, ...(held === undefined ? {} : { writesHeld: held }) };
    const state = { stopping: this.#daemon.lifecycle.stopping, loaded: this.#input !== undefined, inputValid: this.#inputValid, leading, ...(held === undefined ? {} : { held }) };
    return { ...base, ...fleetReadiness(state, targets) };
  }

  targetReadiness(): ReadonlyMap<string, TargetReadinessFacts> {
    return new Map(this.status().targets.map((t) => [t.name, { url: t.url, ready: t.ready, reason: t.reason }]));
  }

  readinessJson(): Record<string, unknown> {
    const { ready: _r, reason: _reason, ...rest } = this.status();
    return rest;
  }

  /** /healthz: not while a target's run, abandoned at its deadline, hangs on. */
  liveness(): Readiness {
    const wedged = [...this.#daemon.runners.entries()].find(([, r]) => r.reconciler.status().stuck);
    return wedged ? { ready: false, reason: `target ${wedged[0]}: ${liveness(wedged[1].reconciler.status()).reason}` } : { ready: true, reason: 'ok' };
  }

  onStopping(reason: StopResult['reason'], graceMs: number): void {
    // The stop signal has fired: runs send nothing more; what is counted here was on the wire, and finishes.
    let sent = 0;
    for (const runner of this.#daemon.runners.values()) sent += runner.service.onWire?.() ?? 0;
    this.#log.info({ reason, graceMs, sent }, 'stopping');
  }

  logStarted(url: string): void {
    const options = this.#options;
    const { schedule, mode } = this.#daemon.runtime;
    const shard = options.shard ? { shard: `${options.shard.index}/${options.shard.count}` } : {};
    this.#log.info({ url, file: options.file, targets: options.targetsFile, schedule, mode, targetConcurrency: options.targetConcurrency, ...shard }, 'fleet daemon started');
  }

  #mayWrite(): boolean {
    return this.#deps.mayWrite?.() !== false;
  }

  async #reloadSettings(read: NonNullable<FleetDaemonDeps['reloadSettings']>): Promise<void> {
    try {
      await this.#daemon.reload(read);
      this.#reopenAll = true;
      this.#log.info('settings reloaded; every target opens its service again');
    } catch (error) {
      this.#log.error({ err: errorForLog(error) }, 'could not reload the settings; keeping the previous settings');
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
    this.#daemon.lifecycle.setWatchedFiles([this.#options.file, this.#options.targetsFile, ...loaded.watchFiles]);
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
    for (const [name, runner] of [...this.#daemon.runners.entries()]) {
      if (!wanted.has(name)) {
        this.#log.info({ target: name }, 'target removed (from the targets file, or from this shard); no longer reconciled');
        await this.#removeRunner(name, runner);
      }
    }
    for (const target of targets) {
      const runner = this.#daemon.runners.get(target.name);
      if (runner === undefined) this.#addRunner(target);
      else if (targetKey(this.#entries.get(target.name)!) !== targetKey(target) || this.#reopenAll) await this.#reopenRunner(runner, target);
    }
    this.#reopenAll = false;
    this.#metrics.setOwnedTargets(this.#daemon.runners.size);
  }

  #addRunner(target: Target, credentialFrom?: CredentialHandover): TargetRunner {
    const daemon = this.#daemon;
    const name = target.name;
    const logger = this.#log.child({ target: name });
    const metrics = this.#metrics.forTarget(name);
    const runner = new TargetRunner({
      ...daemon.sharedRunnerParts(),
      logger,
      metrics,
      service: this.#deps.openTarget(target, credentialFrom),
      loadInput: () => this.#loadTarget(name),
      mode: () => (this.#mayWrite() ? daemon.modeFor(name, daemon.runtime.mode) : 'observe'),
      onWatchFiles: () => undefined,
      notify: (event) => this.#deps.notify?.({ ...event, target: name }),
      // A standby (another replica holds the shard's Lease) runs nothing; leading again triggers every target.
      mayRun: () => this.#mayWrite() && !daemon.lifecycle.stopping,
      slots: this.#slots,
      afterRun: (r) => {
        metrics.setReady(this.#readiness(r).ready);
        daemon.setReady(this.status().ready);
      },
    });
    daemon.runners.set(name, runner);
    this.#entries.set(name, target);
    return runner;
  }

  async #removeRunner(name: string, runner: TargetRunner): Promise<void> {
    this.#daemon.runners.delete(name);
    this.#entries.delete(name);
    this.#metrics.removeTarget(name);
    await runner.stop();
  }

  /** Its URL, credential or overrides changed (or the settings): a new client, once its run in progress is over. */
  async #reopenRunner(runner: TargetRunner, target: Target): Promise<void> {
    // The integrator key goes over as it stands: one rotated since the file was last written
    // (a key file that could not be written) is in memory only, and the file holds a retired one.
    const credentialFrom = await runner.stopAndHandOver();
    this.#daemon.runners.delete(target.name);
    this.#addRunner(target, credentialFrom).attempted = runner.attempted;
  }

  #readiness(runner: TargetRunner): Readiness {
    if (!runner.attempted) return { ready: false, reason: 'no run yet' };
    const writeBack = runner.service.credentialStatus?.()?.writeBack;
    const keyNotKept = writeBack !== undefined && !writeBack.ok ? { keyWriteBackError: writeBack.error ?? 'error' } : {};
    return readiness({ ...runner.reconciler.status(), stopping: false, mode: this.#daemon.runtime.mode, ...keyNotKept }, this.#options.readiness ?? defaultReadiness);
  }

  /** Its entry in /readyz. */
  #describe(target: Target, runner: TargetRunner): TargetReadiness {
    const s = runner.reconciler.status();
    const rd = this.#readiness(runner);
    return {
      name: target.name,
      url: target.url,
      ready: rd.ready,
      reason: rd.reason,
      attempted: runner.attempted,
      running: s.running,
      lastOutcome: s.lastOutcome ?? null,
      lastSuccessAt: s.lastSuccessAt === undefined ? null : new Date(s.lastSuccessAt).toISOString(),
      consecutiveFailures: s.consecutiveFailures,
    };
  }
}

/** A target's entry as it shapes its service; a credential's value is compared, never shown. */
function targetKey(target: Target): string {
  const c = target.credentials;
  const credential = c === undefined ? '' : c.kind === 'token' ? `token:${c.token.reveal()}` : c.kind === 'integratorKey' ? `key:${c.refreshToken.reveal()}` : c.kind === 'tokenFile' ? `tokenFile:${c.tokenFile}` : c.kind === 'integratorKeySecret' ? `keySecret:${c.integratorKeySecret}` : `keyFile:${c.refreshTokenFile}`;
  return JSON.stringify([target.url, credential, target.overrides, ...(target.mode === undefined ? [] : [target.mode])]);
}

/** The fleet's readiness, from its state and its targets' (a standby is ready: it has nothing to run). */
function fleetReadiness(state: { stopping: boolean; loaded: boolean; inputValid: boolean; leading: boolean; held?: string }, targets: readonly TargetReadiness[]): Readiness {
  if (state.stopping) return { ready: false, reason: 'shutting down' };
  if (!state.loaded) return { ready: false, reason: state.inputValid ? 'loading the targets file and the desired-state file' : 'the targets file or the desired-state file is invalid and no good version has been loaded yet' };
  if (!state.leading) return { ready: true, reason: `standby: another replica holds this shard's Lease; nothing is run here until it is released or expires` };
  const waiting = targets.filter((t) => !t.attempted).length;
  if (waiting > 0) return { ready: false, reason: `waiting for the first run of ${waiting} of ${targets.length} targets` };
  const failing = targets.filter((t) => !t.ready);
  const notes = [failing.length > 0 ? `${failing.length} of ${targets.length} targets not ready: ${failing.slice(0, 10).map((t) => t.name).join(', ')}${failing.length > 10 ? ', …' : ''}` : '', state.inputValid ? '' : 'a file is invalid: the last good version is kept', state.held ?? ''].filter(Boolean);
  return { ready: true, reason: notes.length === 0 ? `ok (${targets.length} targets)` : `ok (${notes.join('; ')})` };
}

function checkFleetOptions(o: FleetDaemonOptions): void {
  if (!Number.isInteger(o.targetConcurrency) || o.targetConcurrency < 1) {
    throw new RangeError(`Expected \`targetConcurrency\` to be an integer from 1 upwards, got ${JSON.stringify(o.targetConcurrency)}`);
  }
  parseListen(o.listen);
  checkSchedule(o.schedule);
}
