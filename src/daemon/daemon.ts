import type { Logger } from '../obs/index.js';
import { systemTimers, type Timers } from '../time/index.js';
import { defaultBackoff } from './backoff.js';
import { DaemonLifecycle, type ShutdownSteps, type StartedDaemon, type StopResult } from './daemon-lifecycle.js';
import { defaultRunDeadlineMs, type DaemonOptions, type DaemonRuntimeOptions, type MutableRuntimeOptions } from './daemon-options.js';
import { errorForLog } from './describe-error.js';
import type { FileWatchFactory } from './file-watch.js';
import { InputRecheck } from './input-recheck.js';
import type { Readiness } from './readiness.js';
import type { ScheduleFactory } from './schedule.js';
import type { SignalSource } from './signals.js';
import { SyncLoop, type RunVerdict, type TriggerReason } from './sync-loop.js';
import type { TargetRunner, TargetRunnerParts } from './target-runner.js';

/** What every daemon is given, whatever its targets. */
export interface DaemonParts {
  /** The daemon's log (`component: daemon`). */
  readonly logger: Logger;
  readonly metrics: { setReady(ready: boolean): void; render(): Promise<{ contentType: string; body: string }> };
  readonly options: DaemonOptions;
  /** The runtime options it starts with; a reload changes them in place. */
  readonly runtime: MutableRuntimeOptions;
  /**
   * The log of one service says when the schedule fires (debug) and what a reload changed
   * (mode, schedule, approvals file); a fleet's says neither (its targets log their runs).
   */
  readonly logsChanges: boolean;
  /** @default the system's */
  readonly timers?: Timers | undefined;
  /** Jitter of the retry backoff. @default Math.random */
  readonly random?: (() => number) | undefined;
  /** Where SIGTERM, SIGINT and SIGHUP come from; null: none. @default process */
  readonly signals?: SignalSource | null | undefined;
  /** @default node-cron */
  readonly scheduler?: ScheduleFactory | undefined;
  /** @default chokidar on the parent directories */
  readonly watcher?: FileWatchFactory | undefined;
}

/**
 * What a daemon's targets are and how they are read: the one service of `amsync daemon`, or the
 * services a targets file lists (targets-file.ts). The daemon does the rest the same way for
 * both: the endpoints, the watch, the schedule, the signals, the reload, a runner per target.
 */
export interface DaemonTargets<S extends Readiness> {
  /**
   * Before the targets are asked for a run: reload the settings (`reload` among the reasons),
   * read the input once for every target, start and stop runners. It runs in a loop of its own
   * (single flight). Absent: a trigger goes straight to the runners, which read their input
   * themselves (and reload the settings in their run).
   */
  refresh?(reasons: readonly TriggerReason[]): Promise<void>;
  /** Logged when refresh throws (a bug below). */
  readonly refreshFailedMessage?: string;
  /** /readyz, and the handle's status(). */
  status(): S;
  /** /readyz's JSON body, when it is not the status. */
  readinessJson?(): Record<string, unknown>;
  /** /healthz. */
  liveness(): Readiness;
  /** The files watched from the start, before the input loads. */
  readonly watched: readonly string[];
  /** Whether the input loaded at the last attempt. */
  inputValid(): boolean;
  /** Loads the input offline; true when it loads (while it is invalid, looked at now and then). */
  probeInput(): Promise<boolean>;
  /** What SIGHUP reloads besides the settings, for its log line: `file`, `files`. */
  readonly reloads: string;
  /** The first step of a stop, once no longer ready: say what the daemon waits for. */
  onStopping(reason: StopResult['reason'], graceMs: number): void;
  /** Logged when the runs are not over within the grace period. */
  readonly unfinishedMessage: string;
  logStarted(url: string): void;
}

/** What a runner takes from the daemon whatever its target: the clock, the backoff, the stop, the deadline. */
export type SharedRunnerParts = Pick<TargetRunnerParts, 'timers' | 'backoff' | 'random' | 'stop' | 'runDeadlineMs'>;

/**
 * The daemon, of one service or of a fleet (a single service is a fleet of one target): one
 * run at start, then a run of every target whenever the watched files change, the schedule
 * fires, SIGHUP comes or the recheck finds the input valid again. Each target has a runner
 * (its reconciler and its single-flight loop, retried with backoff); the daemon holds the
 * runtime options a reload changes, the schedule, and the lifecycle (serve, watch, schedule,
 * signals, shutdown). Like controller-runtime's manager: one for many objects.
 */
export class Daemon<S extends Readiness> {
  readonly log: Logger;
  readonly timers: Timers;
  readonly options: DaemonOptions;
  /** What a reload (SIGHUP) changes in place. */
  readonly runtime: MutableRuntimeOptions;
  readonly lifecycle: DaemonLifecycle;
  /** The runners, by target name (the one service's: ''). */
  readonly runners = new Map<string, TargetRunner>();
  readonly #parts: DaemonParts;
  readonly #recheck: InputRecheck;
  readonly #targets: DaemonTargets<S>;
  /** Reads the input before the runners run (a fleet); absent for one service. */
  readonly #refreshLoop: SyncLoop | undefined;

  /** `targets` is made once the daemon's own parts are: it may make runners at once. */
  constructor(parts: DaemonParts, targets: (daemon: Daemon<S>) => DaemonTargets<S>) {
    this.#parts = parts;
    this.log = parts.logger;
    this.timers = parts.timers ?? systemTimers;
    this.options = parts.options;
    this.runtime = parts.runtime;
    this.lifecycle = new DaemonLifecycle({
      logger: this.log,
      timers: this.timers,
      metrics: parts.metrics,
      scheduler: parts.scheduler,
      watcher: parts.watcher,
      shutdown: this.#shutdownSteps(),
    });
    this.#recheck = new InputRecheck({
      timers: this.timers,
      intervalMs: this.options.invalidRecheckMs ?? 10_000,
      isValid: () => this.#targets.inputValid(),
      probe: () => this.#targets.probeInput(),
      onValid: () => this.trigger('file'),
      stopping: () => this.lifecycle.stopping,
    });
    this.#targets = targets(this);
    const refresh = this.#targets.refresh?.bind(this.#targets);
    this.#refreshLoop =
      refresh === undefined
        ? undefined
        : new SyncLoop({
            run: (reasons) => this.#refreshThenRun(refresh, reasons),
            timers: this.timers,
            backoff: this.options.backoff ?? defaultBackoff,
            random: this.#random,
            onRunError: (error) => this.log.error({ err: errorForLog(error) }, this.#targets.refreshFailedMessage ?? 'run failed unexpectedly'),
          });
  }

  /** Serve, watch, schedule, listen for signals, then ask for the first run. */
  async start(): Promise<StartedDaemon<S>> {
    const targets = this.#targets;
    return this.lifecycle.start({
      endpoints: {
        listen: this.options.listen,
        readiness: () => targets.status(),
        ...(targets.readinessJson ? { readinessJson: () => targets.readinessJson!() } : {}),
        liveness: () => targets.liveness(),
      },
      watch: { files: targets.watched, debounceMs: this.runtime.debounceMs, pollMs: this.options.watchPollMs },
      schedule: this.runtime.schedule,
      onSchedule: () => this.#onSchedule(),
      signals: this.#parts.signals,
      reloads: targets.reloads,
      loop: { trigger: (reason) => this.trigger(reason), idle: () => this.idle() },
      status: () => targets.status(),
      logStarted: (url) => targets.logStarted(url),
    });
  }

  /** Asks every target for a run (after the input is read, when the targets read it together). */
  trigger(reason: TriggerReason): void {
    if (this.#refreshLoop) this.#refreshLoop.trigger(reason);
    else for (const runner of this.runners.values()) runner.loop.trigger(reason);
  }

  /** Resolves when no run is in progress, of the input or of any target. */
  async idle(): Promise<void> {
    await this.#refreshLoop?.idle();
    await Promise.all([...this.runners.values()].map((r) => r.loop.idle()));
  }

  /** What every runner takes from the daemon. */
  sharedRunnerParts(): SharedRunnerParts {
    return {
      timers: this.timers,
      backoff: this.options.backoff ?? defaultBackoff,
      random: this.#random,
      stop: this.lifecycle.stopSignal,
      runDeadlineMs: () => this.runtime.runDeadlineMs ?? defaultRunDeadlineMs,
    };
  }

  /** After the input was read: while it is invalid, look again now and then. */
  recheckInput(): void {
    this.#recheck.arm();
  }

  setReady(ready: boolean): void {
    this.#parts.metrics.setReady(ready);
  }

  /**
   * SIGHUP: the settings as they now are, in place; a bad schedule keeps the previous one.
   * `read` throws for bad settings (the caller says what is kept).
   */
  async reload(read: () => Promise<Partial<DaemonRuntimeOptions> | void>): Promise<void> {
    const changes = (await read()) ?? {};
    this.#applyRuntime(changes);
    if (changes.schedule && changes.schedule !== this.runtime.schedule && !this.lifecycle.stopping) await this.#replaceSchedule(changes.schedule);
  }

  get #random(): () => number {
    return this.#parts.random ?? Math.random;
  }

  async #refreshThenRun(refresh: NonNullable<DaemonTargets<S>['refresh']>, reasons: readonly TriggerReason[]): Promise<RunVerdict> {
    await refresh(reasons);
    this.#recheck.arm();
    for (const runner of this.runners.values()) for (const reason of reasons) runner.loop.trigger(reason);
    this.setReady(this.#targets.status().ready);
    return { retry: false };
  }

  #onSchedule(): void {
    if (this.#parts.logsChanges) this.log.debug('scheduled run');
    this.trigger('schedule');
  }

  #applyRuntime(changes: Partial<DaemonRuntimeOptions>): void {
    const runtime = this.runtime;
    const announce = this.#parts.logsChanges;
    if (changes.mode && changes.mode !== runtime.mode) {
      if (announce) this.log.info({ from: runtime.mode, to: changes.mode }, 'mode changed');
      runtime.mode = changes.mode;
    }
    if (changes.debounceMs !== undefined && changes.debounceMs !== runtime.debounceMs) {
      runtime.debounceMs = changes.debounceMs;
      this.lifecycle.setDebounce(changes.debounceMs);
    }
    if (changes.shutdownGraceMs !== undefined) runtime.shutdownGraceMs = changes.shutdownGraceMs;
    if (changes.runDeadlineMs !== undefined) runtime.runDeadlineMs = changes.runDeadlineMs;
    // A key present but undefined unsets it. The watch follows at the run's load (onWatchFiles).
    if ('approvalsFile' in changes) {
      if (announce && changes.approvalsFile !== runtime.approvalsFile) this.log.info({ from: runtime.approvalsFile ?? null, to: changes.approvalsFile ?? null }, 'approvals file changed');
      if (changes.approvalsFile === undefined) delete runtime.approvalsFile;
      else runtime.approvalsFile = changes.approvalsFile;
    }
  }

  async #replaceSchedule(expression: string): Promise<void> {
    try {
      await this.lifecycle.replaceSchedule(expression, () => this.#onSchedule());
      if (this.#parts.logsChanges) this.log.info({ from: this.runtime.schedule, to: expression }, 'schedule changed');
      this.runtime.schedule = expression;
    } catch (error) {
      this.log.error({ err: errorForLog(error) }, 'the new schedule is invalid; keeping the previous one');
    }
  }

  #shutdownSteps(): ShutdownSteps {
    return {
      graceMs: () => this.runtime.shutdownGraceMs,
      onStopping: (reason, graceMs) => {
        this.#recheck.cancel();
        this.#targets.onStopping(reason, graceMs);
      },
      stopRuns: () => Promise.all([this.#refreshLoop?.stop(), ...[...this.runners.values()].map((r) => r.loop.stop())]),
      unfinishedMessage: () => this.#targets.unfinishedMessage,
      release: () => {
        for (const runner of this.runners.values()) runner.service.close?.();
      },
    };
  }
}
