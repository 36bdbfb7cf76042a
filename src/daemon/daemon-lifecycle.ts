import type { Logger } from '../obs/index.js';
import type { Timers } from '../time/index.js';
import { errorForLog } from './describe-error.js';
import { watchFiles, type FileWatch, type FileWatchFactory } from './file-watch.js';
import { startHealthServer, type HealthServer, type HealthServerOptions } from './health-server.js';
import { parseListen } from './listen-address.js';
import { cronSchedule, type Schedule, type ScheduleFactory } from './schedule.js';
import { onSignals, type SignalSource } from './signals.js';
import type { TriggerReason } from './sync-loop.js';

export interface StopResult {
  /** What stopped the daemon. */
  readonly reason: 'SIGTERM' | 'SIGINT' | 'stop';
  /** The run in progress (if any) ended within the grace period. */
  readonly finished: boolean;
  /** A second signal came: exit now, without waiting any longer. */
  readonly forced: boolean;
}

/** What a daemon does in its own way when it stops; the lifecycle does the rest, in order. */
export interface ShutdownSteps {
  /** How long the runs in progress may go on (read once, when the stop begins). */
  graceMs(): number;
  /** The first step, once no longer ready: cancel the daemon's own timers, log what it waits for. */
  onStopping(reason: StopResult['reason'], graceMs: number): void;
  /** No new run; resolves when the runs in progress are over. */
  stopRuns(): Promise<unknown>;
  /** Logged when they are not over within the grace period. */
  unfinishedMessage(): string;
  /** After the runs (or the grace period), before the endpoint closes: release what they used. */
  release?(): void;
}

export interface LifecycleDeps {
  readonly logger: Logger;
  readonly timers: Timers;
  readonly metrics: { setReady(ready: boolean): void; render(): Promise<{ contentType: string; body: string }> };
  /** @default node-cron (tests fire the schedule themselves) */
  readonly scheduler?: ScheduleFactory | undefined;
  /** @default chokidar */
  readonly watcher?: FileWatchFactory | undefined;
  readonly shutdown: ShutdownSteps;
}

export type EndpointOptions = Pick<HealthServerOptions, 'readiness' | 'readinessJson' | 'liveness' | 'status'> & {
  /** HOST:PORT. */
  readonly listen: string;
};

/** What a daemon's runs are asked through: its loop, as the lifecycle sees it. */
export interface DaemonLoop {
  trigger(reason: TriggerReason): void;
  /** Resolves when no run is in progress. */
  idle(): Promise<void>;
}

export interface StartParts<S> {
  readonly endpoints: EndpointOptions;
  readonly watch: Omit<WatchOptions, 'onChange'>;
  readonly schedule: string;
  /** When the schedule fires. @default the loop is asked for a `schedule` run */
  onSchedule?(): void;
  readonly signals: SignalSource | null | undefined;
  /** What SIGHUP reloads besides the settings, for its log line: `file`, `files`. */
  readonly reloads: string;
  readonly loop: DaemonLoop;
  status(): S;
  /** Logs that the daemon started, with what it serves. */
  logStarted(url: string): void;
}

export interface StartedDaemon<S> {
  /** `http://HOST:PORT` of the health endpoint. */
  readonly url: string;
  /**
   * Resolves when the daemon has stopped (after SIGTERM/SIGINT or stop()), or at once on a
   * second signal with `forced`. It never rejects. The command turns it into an exit code:
   * the daemon itself never exits the process.
   */
  readonly stopped: Promise<StopResult>;
  stop(reason?: StopResult['reason']): Promise<StopResult>;
  status(): S;
  /** Asks for a run, as a file change would. */
  trigger(reason?: TriggerReason): void;
  /** Resolves when no run is in progress. */
  idle(): Promise<void>;
}

export interface WatchOptions {
  readonly files: readonly string[];
  readonly debounceMs: number;
  readonly pollMs: number | undefined;
  /** A watched file changed (logged here). */
  onChange(): void;
}

/**
 * What every daemon has around its runs, the sidecar and the fleet's alike: the health
 * endpoint, the file watch, the schedule, the signals, and the shutdown that takes them down
 * in order. The runs themselves (loops, reconcilers) are the daemon's; it starts these in
 * order (serve, watch, schedule, listenForSignals) and tells the shutdown how to stop them.
 */
export class DaemonLifecycle {
  readonly #d: LifecycleDeps;
  readonly #log: Logger;
  #server: HealthServer | undefined;
  #watch: FileWatch | undefined;
  #schedule: Schedule | undefined;
  #stopping = false;
  readonly #stop = new AbortController();
  #stopping$: Promise<StopResult> | undefined;
  #firstSignal: 'SIGTERM' | 'SIGINT' | undefined;
  #unsubscribe = (): void => {};
  #resolveStopped!: (result: StopResult) => void;
  /**
   * Resolves when the daemon has stopped (after SIGTERM/SIGINT or stop()), or at once on a
   * second signal with `forced`. It never rejects.
   */
  readonly stopped = new Promise<StopResult>((resolve) => {
    this.#resolveStopped = resolve;
  });

  constructor(deps: LifecycleDeps) {
    this.#d = deps;
    this.#log = deps.logger;
  }

  /** A stop has begun: no new run, not ready. */
  get stopping(): boolean {
    return this.#stopping;
  }

  /**
   * Fires when a stop begins (SIGTERM, SIGINT, stop()): the runs in progress send nothing more
   * (their clients' stop and their applies' signal), and what they already sent finishes.
   */
  get stopSignal(): AbortSignal {
    return this.#stop.signal;
  }

  /** Serves /healthz, /readyz, /metrics and /status; returns the URL. Throws DaemonError when the address cannot be bound. */
  async serve(options: EndpointOptions): Promise<string> {
    this.#server = await startHealthServer({
      address: parseListen(options.listen),
      readiness: options.readiness,
      ...(options.readinessJson ? { readinessJson: options.readinessJson } : {}),
      liveness: options.liveness,
      ...(options.status ? { status: options.status } : {}),
      metrics: () => this.#d.metrics.render(),
      logger: this.#log,
    });
    return this.#server.url;
  }

  /** Watches the files; a failure is logged, not thrown: the schedule re-reads them at every run. */
  async watch(options: WatchOptions): Promise<void> {
    try {
      this.#watch = await (this.#d.watcher ?? watchFiles)({
        files: options.files,
        debounceMs: options.debounceMs,
        onChange: (files) => {
          // The run it starts says `reasons: ["file"]` in its line at info.
          this.#log.debug({ files }, 'watched file changed');
          options.onChange();
        },
        logger: this.#log,
        timers: this.#d.timers,
        ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs }),
      });
    } catch (error) {
      this.#log.warn({ err: errorForLog(error) }, 'cannot watch the files; changes are picked up at the next scheduled run');
    }
  }

  /** Starts the schedule; when it cannot start, closes what started before and throws. */
  async schedule(expression: string, fire: () => void): Promise<void> {
    try {
      this.#schedule = (this.#d.scheduler ?? cronSchedule)(expression, fire, this.#log);
    } catch (error) {
      await this.#watch?.close();
      await this.#server?.close();
      throw error;
    }
  }

  /**
   * A new schedule in place of the current one; throws (keeping the current one) when the
   * expression is invalid. The new one is in place before the old one stops, so a stop that
   * comes meanwhile stops the new one. Resolves when the old one has stopped.
   */
  replaceSchedule(expression: string, fire: () => void): Promise<void> {
    const next = (this.#d.scheduler ?? cronSchedule)(expression, fire, this.#log);
    const previous = this.#schedule;
    this.#schedule = next;
    return previous?.stop() ?? Promise.resolve();
  }

  /** The files the desired state now reads (a secret file came or went). */
  setWatchedFiles(files: readonly string[]): void {
    this.#watch?.setFiles(files).catch((error: unknown) => this.#log.warn({ err: errorForLog(error) }, 'could not update the watched files'));
  }

  setDebounce(ms: number): void {
    this.#watch?.setDebounce(ms);
  }

  /** SIGTERM and SIGINT stop (a second one forces); SIGHUP calls `reload`. `null`: none. @default process */
  listenForSignals(source: SignalSource | null | undefined, reload: () => void): void {
    if (source === null) return;
    this.#unsubscribe = onSignals(source ?? process, {
      stop: (signal) => {
        if (this.#firstSignal === undefined) {
          this.#firstSignal = signal;
          void this.stop(signal);
          return;
        }
        this.#log.warn({ signal }, 'second signal: exiting now');
        this.#unsubscribe();
        this.#resolveStopped({ reason: signal, finished: false, forced: true });
      },
      reload,
    });
  }

  /**
   * The start both daemons make, in order: endpoints, watcher, schedule, signals; then the
   * daemon says it started and its loop gets the first run. A file change asks the loop for a
   * run, SIGHUP for a reload. Returns the handle the daemon gives its caller: stopping is the
   * lifecycle's, status, triggers and idleness the daemon's.
   */
  async start<S>(parts: StartParts<S>): Promise<StartedDaemon<S>> {
    const { loop } = parts;
    const url = await this.serve(parts.endpoints);
    await this.watch({ ...parts.watch, onChange: () => loop.trigger('file') });
    await this.schedule(parts.schedule, parts.onSchedule ?? (() => loop.trigger('schedule')));
    this.listenForSignals(parts.signals, () => {
      this.#log.info(`SIGHUP: reloading the settings and the ${parts.reloads}`);
      loop.trigger('reload');
    });
    parts.logStarted(url);
    loop.trigger('start');
    return {
      url,
      stopped: this.stopped,
      stop: (reason) => this.stop(reason),
      status: parts.status,
      trigger: (reason = 'file') => loop.trigger(reason),
      idle: () => loop.idle(),
    };
  }

  /** Stops once, whoever asks and however often. */
  stop(reason: StopResult['reason'] = 'stop'): Promise<StopResult> {
    this.#stopping$ ??= this.#shutDown(reason);
    return this.#stopping$;
  }

  async #shutDown(reason: StopResult['reason']): Promise<StopResult> {
    const steps = this.#d.shutdown;
    this.#stopping = true;
    // First of all: nothing more is sent (writes queued in a run are cancelled at once).
    this.#stop.abort(new Error(`the daemon is stopping (${reason})`));
    this.#d.metrics.setReady(false);
    const graceMs = steps.graceMs();
    steps.onStopping(reason, graceMs);
    // First of all no new run; then the triggers go.
    const runsOver = steps.stopRuns();
    await Promise.allSettled([this.#schedule?.stop(), this.#watch?.close()]);
    const finished = await this.#withinGrace(runsOver, graceMs);
    if (!finished) this.#log.error({ graceMs }, steps.unfinishedMessage());
    steps.release?.();
    await this.#server?.close();
    this.#unsubscribe();
    this.#log.info({ finished }, 'stopped');
    const result: StopResult = { reason, finished, forced: false };
    this.#resolveStopped(result);
    return result;
  }

  /** Whether `done` resolves within `graceMs`. */
  async #withinGrace(done: Promise<unknown>, graceMs: number): Promise<boolean> {
    const { timers } = this.#d;
    let graceHandle: unknown;
    const finished = await Promise.race([
      done.then(() => true),
      new Promise<boolean>((resolve) => {
        graceHandle = timers.setTimeout(() => resolve(false), graceMs);
      }),
    ]);
    timers.clearTimeout(graceHandle);
    return finished;
  }
}
