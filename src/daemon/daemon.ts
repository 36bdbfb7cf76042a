import type { AuditControlEntry } from '../app/index.js';
import type { NotifyEvent } from '../model/index.js';
import type { Logger } from '../obs/index.js';
import { systemTimers, type Timers } from '../time/index.js';
import { defaultBackoff } from './backoff.js';
import { DaemonLifecycle, type ShutdownSteps, type StartedDaemon, type StopResult } from './daemon-lifecycle.js';
import { defaultRunDeadlineMs, type DaemonOptions, type DaemonRuntimeOptions, type MutableRuntimeOptions } from './daemon-options.js';
import { errorForLog } from './describe-error.js';
import type { FileWatchFactory } from './file-watch.js';
import { InputRecheck } from './input-recheck.js';
import type { CtlLastRun, CtlRequest, CtlResponse, CtlStatus } from './ctl-protocol.js';
import { startCtlServer, type CtlServer } from './ctl-server.js';
import type { DaemonStatus, Readiness } from './readiness.js';
import type { DaemonMode } from './reconciler.js';
import { compileWindows } from './sync-windows.js';
import { suspendedWords, WriteGate } from './write-gate.js';
import type { ScheduleFactory } from './schedule.js';
import type { SignalSource } from './signals.js';
import { SyncLoop, type RunVerdict, type TriggerReason } from './sync-loop.js';
import type { TargetRunner, TargetRunnerParts } from './target-runner.js';
import type { StatusSnapshot } from '../report/index.js';
import { statusSnapshot, type TargetReadinessFacts } from './status-snapshot.js';

/** What every daemon is given, whatever its targets. */
export interface DaemonParts {
  /** The daemon's log (`component: daemon`). */
  readonly logger: Logger;
  readonly metrics: {
    setReady(ready: boolean): void;
    render(): Promise<{ contentType: string; body: string }>;
    /** `amsync ctl suspend`: 1 while suspended. */
    setSuspended?(suspended: boolean): void;
    /** daemon.windows: 1 while the windows let runs write. */
    setSyncWindowOpen?(open: boolean): void;
  };
  readonly options: DaemonOptions;
  /** Told of a suspension and a resume (the webhooks); must not block or throw. */
  readonly notify?: ((event: NotifyEvent) => void) | undefined;
  /**
   * Writes a control line to the audit log (a suspension, a resume, a window closing or
   * opening, an override); absent without an audit log. May throw: the daemon logs it.
   */
  readonly audit?: ((entry: AuditControlEntry) => void) | undefined;
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
  /** Each target's readiness and URL, for the status page; absent: the one service, whose readiness is the daemon's. */
  targetReadiness?(): ReadonlyMap<string, TargetReadinessFacts>;
  /** The status page's title says a fleet. */
  readonly fleet: boolean;
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
  /** Suspension, sync windows, and a `ctl sync --override-window`: whether runs may write. */
  readonly gate: WriteGate;
  #ctl: CtlServer | undefined;
  /** The run asked for when the deny windows open now end, and when that is. */
  #windowEnd: { at: number; handle: unknown } | undefined;
  /** Whether the windows let runs write, as last seen: a change is an audit line. Open until the daemon looks. */
  #windowOpen = true;
  /** Per target, why its last run's writes were held (undefined: they were not): the line is info when that changes, debug while it lasts. */
  readonly #lastHeld = new Map<string, string | undefined>();

  /** `targets` is made once the daemon's own parts are: it may make runners at once. */
  constructor(parts: DaemonParts, targets: (daemon: Daemon<S>) => DaemonTargets<S>) {
    this.#parts = parts;
    this.log = parts.logger;
    this.timers = parts.timers ?? systemTimers;
    this.options = parts.options;
    this.runtime = parts.runtime;
    this.gate = new WriteGate(compileWindows(parts.runtime.windows ?? []), () => this.timers.wallNow());
    this.lifecycle = new DaemonLifecycle({
      logger: this.log,
      timers: this.timers,
      // The window opens and closes with time, not with runs: its gauge is read when scraped.
      metrics: { setReady: (ready) => parts.metrics.setReady(ready), render: () => this.#renderMetrics() },
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
    this.#updateGateMetrics();
    const socket = this.options.socket;
    // Before the endpoints: a second daemon over a live socket stops here, having bound nothing.
    if (socket !== undefined) this.#ctl = await startCtlServer(socket, (request) => this.control(request), this.log);
    try {
      return await this.#startLifecycle(targets);
    } catch (error) {
      await this.#ctl?.close();
      throw error;
    }
  }

  #startLifecycle(targets: DaemonTargets<S>): Promise<StartedDaemon<S>> {
    return this.lifecycle.start({
      endpoints: {
        listen: this.options.listen,
        readiness: () => targets.status(),
        ...(targets.readinessJson ? { readinessJson: () => targets.readinessJson!() } : {}),
        liveness: () => targets.liveness(),
        status: () => this.statusSnapshot(),
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

  /**
   * The mode of a target's next run: the runtime's, unless writes are held (suspended, or a
   * sync window) — then observe, and when a deny window holds them, a run is asked for at its end.
   */
  modeFor(target: string, mode: DaemonMode): DaemonMode {
    const decided = this.gate.modeFor(target, mode);
    this.#updateGateMetrics();
    const heldBefore = this.#lastHeld.get(target);
    this.#lastHeld.set(target, decided.overridden ? undefined : decided.held);
    if (decided.overridden) this.log.info({ target: target || undefined }, 'the sync window holds writes; this run writes once (ctl sync --override-window)');
    else if (decided.held !== undefined) {
      // Said at info when it starts (or its reason changes); each run after, at debug: the run's line says dryRun.
      const level = heldBefore === decided.held ? 'debug' : 'info';
      this.log[level]({ target: target || undefined, held: decided.held }, `writes held (${decided.held}): this run observes only`);
      this.#armWindowEnd();
    }
    return decided.mode;
  }

  /** One request of `amsync ctl` (ctl-server.ts). */
  async control(request: CtlRequest): Promise<CtlResponse> {
    switch (request.op) {
      case 'status':
        return this.#answer('');
      case 'suspend':
        return this.#suspend(request);
      case 'resume':
        return this.#resume(request);
      case 'sync':
        return this.#syncNow(request);
    }
  }

  /** The daemon's state as `amsync ctl status` shows it. */
  ctlStatus(): CtlStatus {
    const window = this.gate.window();
    const suspension = this.gate.suspension;
    const runs = [...this.runners.values()].map((r) => r.reconciler.status());
    const one = runs.length === 1 ? runs[0] : undefined;
    const ready = this.#targets.status();
    // A targets file's runners are named by target; the one service's is ''.
    const fleet = [...this.runners.keys()].some((name) => name !== '');
    return {
      mode: this.runtime.mode,
      writes: this.runtime.mode === 'apply' && this.gate.held() === undefined,
      suspended: suspension ? { reason: suspension.reason, since: new Date(suspension.since).toISOString(), by: suspension.by } : null,
      window: { open: window.open, reason: window.reason, windows: this.gate.windowCount },
      lastRun: { ...lastRunOf(one), running: runs.some((r) => r.running) },
      ready: { ready: ready.ready, reason: ready.reason },
      ...(fleet ? { targets: [...this.runners.entries()].map(([name, r]) => ({ name, ...lastRunOf(r.reconciler.status()) })) } : {}),
    };
  }

  /** `GET /status` and `/status.json`: every target's last run, approvals, expiries, and the audit log's tail. */
  statusSnapshot(): Promise<StatusSnapshot> {
    const targets = this.#targets;
    const ready = targets.status();
    return statusSnapshot({
      now: this.timers.wallNow(),
      fleet: targets.fleet,
      file: this.options.file,
      ctl: this.ctlStatus(),
      runners: this.runners,
      readiness: targets.targetReadiness?.() ?? new Map([['', { url: null, ready: ready.ready, reason: ready.reason }]]),
      auditLog: this.options.auditLog,
    });
  }

  #answer(message: string): CtlResponse {
    return { ok: true, message, status: this.ctlStatus() };
  }

  #suspend(request: CtlRequest): CtlResponse {
    const by = request.uid === undefined || request.uid === null ? null : `uid ${request.uid}`;
    const reason = request.reason?.trim() || 'no reason given';
    const suspension = this.gate.suspend(reason, by);
    const words = suspendedWords(suspension);
    this.log.warn({ reason, by, code: 'suspended' }, `${words}: runs observe only (plan and report drift), nothing is written until \`amsync ctl resume\``);
    this.#parts.notify?.({ event: 'suspension_changed', message: `${words}${by ? ` (by ${by})` : ''}: the daemon observes only until resumed` });
    this.#audit({ event: 'suspended', reason, uid: request.uid ?? null });
    this.#afterGateChange();
    return this.#answer(words);
  }

  #resume(request: CtlRequest): CtlResponse {
    const previous = this.gate.resume();
    if (previous === undefined) return this.#answer('not suspended');
    const by = request.uid === undefined || request.uid === null ? null : `uid ${request.uid}`;
    this.log.info({ by, was: previous.reason, code: 'resumed' }, 'resumed: runs write again; a run corrects the drift now');
    this.#parts.notify?.({ event: 'suspension_changed', message: `resumed${by ? ` by ${by}` : ''} (was ${suspendedWords(previous)})` });
    this.#audit({ event: 'resumed', reason: previous.reason, uid: request.uid ?? null });
    this.#afterGateChange();
    this.trigger('ctl');
    return this.#answer('resumed; a run was asked for');
  }

  #syncNow(request: CtlRequest): CtlResponse {
    if (request.overrideWindow === true) {
      this.gate.overrideWindow(this.runners.keys());
      this.#audit({ event: 'override', reason: this.gate.window().open ? null : this.gate.window().reason, uid: request.uid ?? null });
    }
    this.trigger('ctl');
    const held = this.gate.held();
    const note = held === undefined ? '' : request.overrideWindow === true && this.gate.suspension === undefined ? ' (it writes once, overriding the sync window)' : ` (it observes only: ${held})`;
    return this.#answer(`a run was asked for${note}`);
  }

  #afterGateChange(): void {
    this.#updateGateMetrics();
    this.setReady(this.#targets.status().ready);
  }

  #updateGateMetrics(): void {
    const window = this.gate.window();
    this.#parts.metrics.setSuspended?.(this.gate.suspension !== undefined);
    this.#parts.metrics.setSyncWindowOpen?.(window.open);
    // The windows change with time, not with requests: a change is recorded when the daemon
    // looks (a run, a scrape, a ctl request, a deny window's end), with the time it looked.
    if (window.open !== this.#windowOpen) {
      this.#windowOpen = window.open;
      this.#audit({ event: window.open ? 'window_opened' : 'window_closed', reason: window.open ? null : window.reason, uid: null });
    }
  }

  /** One control line in the audit log; one that cannot be written is logged (what it records happened). */
  #audit(entry: AuditControlEntry): void {
    try {
      this.#parts.audit?.(entry);
    } catch (error) {
      this.log.error({ err: errorForLog(error), event: entry.event }, 'a control line could not be written to the audit log');
    }
  }

  #renderMetrics(): Promise<{ contentType: string; body: string }> {
    this.#updateGateMetrics();
    return this.#parts.metrics.render();
  }

  /** While a deny window holds writes: a run when it ends (allow windows wait for the schedule). */
  #armWindowEnd(): void {
    const until = this.gate.window().denyUntil;
    if (until === undefined || this.gate.suspension !== undefined || this.#windowEnd?.at === until || this.lifecycle.stopping) return;
    if (this.#windowEnd) this.timers.clearTimeout(this.#windowEnd.handle);
    const handle = this.timers.setTimeout(() => {
      this.#windowEnd = undefined;
      this.log.info('the deny window ended: a run corrects what it held');
      this.trigger('window');
    }, Math.max(0, until - this.timers.wallNow()));
    this.#windowEnd = { at: until, handle };
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
    if (changes.windows !== undefined && JSON.stringify(changes.windows) !== JSON.stringify(runtime.windows ?? [])) {
      if (announce) this.log.info({ windows: changes.windows.length }, 'sync windows changed');
      runtime.windows = changes.windows;
      this.gate.setWindows(compileWindows(changes.windows));
      this.#updateGateMetrics();
    }
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
        if (this.#windowEnd) this.timers.clearTimeout(this.#windowEnd.handle);
        this.#windowEnd = undefined;
        this.#targets.onStopping(reason, graceMs);
      },
      stopRuns: () => Promise.all([this.#refreshLoop?.stop(), ...[...this.runners.values()].map((r) => r.loop.stop())]),
      unfinishedMessage: () => this.#targets.unfinishedMessage,
      release: () => {
        for (const runner of this.runners.values()) runner.service.close?.();
        void this.#ctl?.close();
      },
    };
  }
}

/** A target's last run as `ctl status` shows it; none yet without a status. */
function lastRunOf(s: Pick<DaemonStatus, 'lastOutcome' | 'lastSuccessAt' | 'lastError' | 'running'> | undefined): CtlLastRun {
  return {
    outcome: s?.lastOutcome ?? null,
    lastSuccessAt: s?.lastSuccessAt === undefined ? null : new Date(s.lastSuccessAt).toISOString(),
    lastError: s?.lastError ?? null,
    running: s?.running ?? false,
  };
}
