import { endedByStop, stoppedBeforeSending } from '../api/index.js';
import { LockWaitStoppedError } from '../errors.js';
import { syncEvents, type SyncOutcome } from '../sync/index.js';
import { approvalHint, formatDiagnostic, type DesiredState, type Diagnostic, type NotifyEvent } from '../model/index.js';
import type { ApprovalsRead } from './approvals-file.js';
import { pendingApprovalsOf, type PendingApproval, type PendingApprovalsEvent } from './pending-approvals.js';
import type { Logger, DaemonMetrics, RunOutcome } from '../obs/index.js';
import { errorCode, errorForLog, isInvalidInput } from './describe-error.js';
import type { DaemonStatus } from './readiness.js';
import { summariseSync, type RunSummary } from './run-summary.js';
import type { RunVerdict, TriggerReason } from './sync-loop.js';
import type { Timers } from '../time/index.js';
import { ExpiryWatch } from './expiry-watch.js';
import { maxListedChanges, type FailureLine, type LastRun } from '../report/index.js';

export type DaemonMode = 'apply' | 'observe';

export interface LoadedInput {
  readonly desired: DesiredState;
  /** Files whose change should trigger a run: the desired file and the secret files it reads. */
  readonly watchFiles: readonly string[];
  /** Findings that do not stop the load (a literal password...): logged once per version of the file. */
  readonly warnings?: readonly Diagnostic[];
  /** Identifies the version of the file, so its warnings are not logged at every run. */
  readonly fileHash?: string;
}

export interface ReconcilerDeps {
  /** Throws InvalidInputError for a bad file, an unset env secret, an unreadable secret file. */
  loadDesired(): Promise<LoadedInput>;
  /**
   * One reconcile; `dryRun` plans only; `signal` aborts when the run passes its deadline;
   * `reasons` say what started it (the audit log's trigger).
   * `approvals`: the hashes the approvals file lists (a gated change is written only when one
   * covers it, checked against the change as planned in this very run).
   */
  sync(desired: DesiredState, options: { dryRun: boolean; signal: AbortSignal; stop: AbortSignal; reasons: readonly TriggerReason[]; approvals: ReadonlySet<string>; now: () => number }): Promise<SyncOutcome>;
  /**
   * Fires when the daemon begins to stop: passed to every run as `stop` — nothing more is sent,
   * what was sent finishes (the lifecycle's stopSignal). @default never
   */
  readonly stop?: AbortSignal;
  /** Reads the approvals file, at every run that may write; absent: no approvals file. */
  readApprovals?(): Promise<ApprovalsRead>;
  /** New changes wait for an approval (see DaemonDeps.onApprovalsPending). */
  onApprovalsPending?(event: PendingApprovalsEvent): void;
  /** Re-reads the settings (SIGHUP). Throws InvalidInputError for a bad settings file. */
  reloadSettings?(): Promise<void>;
  /** Told of drift, applied changes, failures and an invalid file (the webhooks); never blocks. */
  notify?(event: NotifyEvent): void;
  readonly logger: Logger;
  readonly metrics: DaemonMetrics;
  readonly timers: Timers;
  mode(): DaemonMode;
  /** How long a run may take before it is abandoned, in ms (re-read at each run: SIGHUP may change it). */
  runDeadlineMs(): number;
  /** The file set to watch changed (a secret file is now referenced, or no longer). */
  onWatchFiles(files: readonly string[]): void;
}

/** The stop of a reconciler that has none (tests). */
const never = new AbortController().signal;

/** At most this many diagnostics per load reach the log: a file pasted in the wrong place must not flood it. */
const maxLoggedDiagnostics = 50;
/** At most this many items are named in one drift line. */
const maxLoggedChanges = 25;

/**
 * One run, and what the daemon remembers between runs: the last good desired state, the
 * config validity, successes and failures. Every failure is caught here and becomes an
 * outcome: nothing a run meets (a bad file, the service down, a 401) reaches the caller.
 */
export class Reconciler {
  readonly #d: ReconcilerDeps;
  readonly #log: Logger;
  #lastGood: DesiredState | undefined;
  #desiredValid = true;
  #settingsValid = true;
  #lastSuccessAt: number | undefined;
  #lastOutcome: RunOutcome | undefined;
  #lastError: string | undefined;
  #failures = 0;
  #running = false;
  #warnedFor: string | undefined;
  /** Abandoned runs whose work has not wound down yet (an await that ignores the abort). */
  #stuck = 0;
  #lastRunAbandoned = false;
  /** Gated changes not written for want of an approval, as of the last run that applied. */
  #pending: readonly PendingApproval[] = [];
  /** Hashes the hook was told of, while they stay pending: each is announced once. */
  #announced = new Set<string>();
  #approvalsError: string | undefined;
  /** Expiries of the last plan: the gauges, `access_expiring` told once, the next wake-up. */
  readonly #expiries = new ExpiryWatch();
  /** What the last plan said of expiries: the next one (wall ms) and how many are within 24 h. */
  #expiryFacts: { next: number | undefined; soon: number } = { next: undefined, soon: 0 };
  /** What to list in the approvals file to approve every pending change (approvalHint). */
  #approve: readonly string[] = [];
  /** The run in progress, as the status page will tell it; set by #record, or by a failure. */
  #current: Omit<LastRun, 'startedAt' | 'finishedAt' | 'trigger' | 'outcome'> | undefined;
  /** The last run that ended, for the status page. */
  #lastRun: LastRun | undefined;
  /** When the run in progress started (timers.now()), for its one line's duration. */
  #startedMs = 0;

  constructor(deps: ReconcilerDeps) {
    this.#d = deps;
    this.#log = deps.logger;
  }

  /** Without `stopping` and `mode`, which the daemon adds. */
  status(): Omit<DaemonStatus, 'stopping' | 'mode'> {
    return {
      lastSuccessAt: this.#lastSuccessAt,
      lastOutcome: this.#lastOutcome,
      lastError: this.#lastError,
      consecutiveFailures: this.#failures,
      configValid: this.#desiredValid && this.#settingsValid,
      running: this.#running,
      stuck: this.#stuck > 0,
      lastRunAbandoned: this.#lastRunAbandoned,
      runDeadlineMs: this.#d.runDeadlineMs(),
      pendingApprovals: this.#pending.map((p) => p.hash),
    };
  }

  /** When a run should start for an expiry, a rotation or an overlap's end (wall ms), as of the last run; undefined: none. */
  get nextExpiryWakeAt(): number | undefined {
    return this.#expiries.wakeAt;
  }

  /** The gated changes waiting for an approval, as of the last run that applied. */
  get pendingApprovals(): readonly PendingApproval[] {
    return this.#pending;
  }

  /** What to list in the approvals file to approve every pending change. */
  get approve(): readonly string[] {
    return this.#approve;
  }

  /** The last run that ended (the status page); undefined before one. */
  get lastRun(): LastRun | undefined {
    return this.#lastRun;
  }

  /** The next expiry of the last plan (wall ms) and how many expire within 24 h. */
  get expiryFacts(): { readonly next: number | undefined; readonly soon: number } {
    return this.#expiryFacts;
  }

  /**
   * One run, bounded by the run deadline: past it the run is abandoned. Its signal aborts, so
   * the client sends nothing more and requests in flight are cut; it counts as a failed run
   * (retried with backoff) and in amsync_sync_runs_abandoned_total; and the next run may start
   * at once, even if the abandoned one has not wound down (it can no longer write to the
   * service, and what it would record is dropped). Until it has, /healthz says so.
   */
  async run(reasons: readonly TriggerReason[]): Promise<RunVerdict> {
    const { metrics, timers } = this.#d;
    const started = timers.now();
    this.#startedMs = started;
    const startedAt = timers.wallNow();
    this.#current = undefined;
    this.#running = true;
    metrics.setRunning(true);
    const controller = new AbortController();
    const deadlineMs = this.#d.runDeadlineMs();
    let handle: unknown;
    const deadline = new Promise<'abandoned'>((resolve) => {
      handle = timers.setTimeout(() => resolve('abandoned'), deadlineMs);
    });
    const work = this.#work(reasons, controller.signal);
    const first = await Promise.race([work, deadline]);
    timers.clearTimeout(handle);
    let outcome: RunOutcome;
    if (first === 'abandoned') {
      controller.abort();
      outcome = 'failure';
      this.#abandoned(work, deadlineMs);
    } else {
      outcome = first;
      this.#lastRunAbandoned = false;
    }
    this.#running = false;
    metrics.setRunning(false);
    this.#finish(outcome, started);
    this.#rememberRun(reasons, outcome, startedAt);
    return { retry: outcome === 'failure' || outcome === 'partial' };
  }

  #abandoned(work: Promise<RunOutcome>, deadlineMs: number): void {
    this.#lastRunAbandoned = true;
    this.#lastError = 'run_deadline';
    this.#stuck += 1;
    this.#d.metrics.recordAbandoned();
    this.#log.error({ code: 'run_deadline', deadlineMs }, `the run passed its deadline (${Math.round(deadlineMs / 1000)} s) and was abandoned: its requests are cancelled; the next run goes ahead`);
    void work.finally(() => {
      this.#stuck -= 1;
      this.#log.info({ code: 'run_deadline' }, 'the abandoned run has wound down');
    });
  }

  /** Reload, load and sync; never throws. Once `signal` aborts, it records nothing. */
  async #work(reasons: readonly TriggerReason[], signal: AbortSignal): Promise<RunOutcome> {
    try {
      if (reasons.includes('reload')) await this.#reloadSettings();
      await this.#loadInput();
      if (signal.aborted) return 'failure';
      this.#d.metrics.setConfigValid(this.#desiredValid && this.#settingsValid);
      return await this.#syncLastGood(reasons, signal);
    } catch (error) {
      // #loadInput and #syncLastGood catch what they expect; this is a bug somewhere below.
      if (signal.aborted) return 'failure';
      this.#log.error({ err: errorForLog(error) }, 'sync run failed unexpectedly');
      this.#lastError = errorCode(error);
      return 'failure';
    }
  }

  /**
   * Loads the file without syncing: while the file is invalid the daemon polls this, cheaply
   * and offline, so that a fix the watcher cannot see (a secret file created in a directory
   * nobody watched yet) is still found. True when the file now loads.
   */
  async probeInput(): Promise<boolean> {
    try {
      await this.#d.loadDesired();
      return true;
    } catch {
      return false;
    }
  }

  get inputValid(): boolean {
    return this.#desiredValid;
  }

  async #reloadSettings(): Promise<void> {
    if (!this.#d.reloadSettings) return;
    try {
      await this.#d.reloadSettings();
      if (!this.#settingsValid) this.#log.info('settings are valid again');
      this.#settingsValid = true;
      this.#log.info('settings reloaded');
    } catch (error) {
      if (this.#settingsValid) this.#d.notify?.({ event: 'config_invalid', message: `the settings are invalid; the previous settings are kept: ${errorMessage(error)}` });
      this.#settingsValid = false;
      if (isInvalidInput(error)) this.#logDiagnostics(error.message, error.diagnostics, 'settings are invalid; keeping the previous settings');
      else this.#log.error({ err: errorForLog(error) }, 'could not reload the settings; keeping the previous settings');
    }
  }

  async #loadInput(): Promise<void> {
    try {
      const loaded = await this.#d.loadDesired();
      if (!this.#desiredValid) this.#log.info('the desired-state file is valid again');
      if (loaded.warnings && loaded.warnings.length > 0 && (loaded.fileHash === undefined || loaded.fileHash !== this.#warnedFor)) {
        this.#warnedFor = loaded.fileHash;
        for (const d of loaded.warnings.slice(0, maxLoggedDiagnostics)) this.#log.warn(diagnosticFields(d), formatDiagnostic(d));
      }
      this.#lastGood = loaded.desired;
      this.#desiredValid = true;
      this.#d.onWatchFiles(loaded.watchFiles);
    } catch (error) {
      // Once per change from valid to invalid, not on every run while it stays invalid.
      if (this.#desiredValid) this.#d.notify?.({ event: 'config_invalid', message: `the desired-state file is invalid: ${errorMessage(error)}` });
      this.#desiredValid = false;
      const keeping = this.#lastGood ? 'keeping the last good version; nothing is applied until it is fixed' : 'no good version yet: nothing is synced until it is fixed';
      if (isInvalidInput(error)) this.#logDiagnostics(error.message, error.diagnostics, `the desired-state file is invalid; ${keeping}`);
      else this.#log.error({ err: errorForLog(error) }, `could not load the desired-state file; ${keeping}`);
    }
  }

  async #syncLastGood(reasons: readonly TriggerReason[], signal: AbortSignal): Promise<RunOutcome> {
    const desired = this.#lastGood;
    if (!desired) return 'invalid_input';
    const mode = this.#d.mode();
    const inputValid = this.#desiredValid;
    // An invalid file still lets the daemon look: the last good version is planned, so drift
    // stays visible in logs and metrics, but nothing is applied from a state the user is
    // in the middle of changing.
    const dryRun = mode === 'observe' || !inputValid;
    // The detail; the run's one line at info is `sync finished` (or its failure).
    this.#log.debug({ reasons, mode, dryRun }, 'sync started');
    let sync: SyncOutcome;
    try {
      // Read at every run: a hash listed since the last one approves its change now.
      const approvals = dryRun ? new Set<string>() : await this.#approvals();
      sync = await this.#d.sync(desired, { dryRun, signal, stop: this.#d.stop ?? never, reasons, approvals, now: () => this.#d.timers.wallNow() });
    } catch (error) {
      // Abandoned: the cancellation is the deadline's doing, already recorded.
      if (signal.aborted) return 'failure';
      // The daemon is stopping and cut this run short before it wrote (a listing not finished,
      // one whose retry of a 503 it kept from starting, or a wait for another writer's lock):
      // no failure of the service to report or notify.
      if (this.#d.stop?.aborted === true && (stoppedBeforeSending(error) || endedByStop(error) || error instanceof LockWaitStoppedError)) {
        this.#log.info({ code: 'stopped' }, 'the run was stopped before it wrote anything: the daemon is stopping, nothing more was sent');
        return 'failure';
      }
      this.#lastError = errorCode(error);
      this.#current = { dryRun, drift: 0, applied: 0, changes: [], failures: [], error: `${this.#lastError}: ${errorMessage(error)}` };
      // Found against the service (a role name it does not have): positioned, like a bad file.
      if (isInvalidInput(error)) this.#logDiagnostics(error.message, error.diagnostics, 'sync refused before any write');
      else this.#log.error({ err: errorForLog(error) }, 'sync failed; nothing more was changed');
      this.#d.notify?.({ event: 'failure', message: `sync failed: ${errorMessage(error)}` });
      return 'failure';
    }
    if (signal.aborted) return 'failure';
    const summary = summariseSync(sync, { inputValid, mode });
    this.#record(sync, summary, dryRun, reasons);
    this.#trackApprovals(sync, dryRun);
    for (const event of syncEvents(sync, { dryRun })) this.#d.notify?.(event);
    const expiries = this.#expiries.observe(sync.plan, this.#d.timers.wallNow(), null);
    // A key's rotation that falls due, or its overlap's end, wakes the daemon as an expiry does.
    this.#expiries.alsoWakeAt(sync.rotationWakeAt);
    this.#expiryFacts = { next: expiries.next, soon: expiries.soon };
    this.#d.metrics.setExpiries?.(expiries.next, expiries.soon);
    for (const event of expiries.events) this.#d.notify?.(event);
    return summary.outcome;
  }

  /** The approvals file's hashes; none when it is unset, missing or unusable (said once). */
  async #approvals(): Promise<ReadonlySet<string>> {
    if (!this.#d.readApprovals) return new Set();
    const read = await this.#d.readApprovals();
    if (!read.ok) {
      if (this.#approvalsError !== read.error) this.#log.error({ code: 'approvals_file' }, `the approvals file cannot be used, so nothing that needs approval is applied: ${read.error}`);
      this.#approvalsError = read.error;
      return new Set();
    }
    if (this.#approvalsError !== undefined) this.#log.info('the approvals file is usable again');
    this.#approvalsError = undefined;
    return read.hashes;
  }

  /**
   * What waits for an approval after a run that applied: the gauge, /readyz, one log line, and
   * the hook for each change not announced before (a notification, once per change). A run
   * that only planned (observe mode, an invalid file) or was refused changes nothing here.
   */
  #trackApprovals(sync: SyncOutcome, dryRun: boolean): void {
    if (dryRun || sync.refusal || !sync.approval || sync.cancelled) return;
    const pending = pendingApprovalsOf(sync.plan, sync.approval);
    this.#pending = pending;
    this.#approve = pending.length === 0 ? [] : approvalHint(sync.approval).hashes;
    this.#d.metrics.setPendingApprovals(pending.length);
    if (pending.length === 0) {
      this.#announced = new Set();
      return;
    }
    const withheld = sync.approval.withheld.length;
    // The set hash approves them all only while none of the set was approved (approvalHint).
    const approve = approvalHint(sync.approval).hashes;
    this.#log.warn(
      { pending: pending.map((p) => p.hash), setHash: sync.approval.review.setHash, approve, withheld },
      `${pending.length} change${pending.length === 1 ? '' : 's'} need${pending.length === 1 ? 's' : ''} approval and ${pending.length === 1 ? 'was' : 'were'} not written: list ${approve.join(', ')} in the approvals file`,
    );
    const added = pending.filter((p) => !this.#announced.has(p.hash));
    // Forget what is no longer pending: a change that comes back is announced again.
    this.#announced = new Set(pending.map((p) => p.hash));
    if (added.length === 0 || !this.#d.onApprovalsPending) return;
    try {
      this.#d.onApprovalsPending({ setHash: sync.approval.review.setHash!, approve, pending, added });
    } catch (error) {
      // A notifier's failure is its own: the run and the service are fine.
      this.#log.warn({ err: errorForLog(error) }, 'the approvals-pending hook failed');
    }
  }

  /**
   * What the run did: the metrics, the status page's facts, and the log — one line at info
   * (`sync finished`: the outcome, the counts, the drift, the first failures, the duration),
   * a line per change at debug; a failed change, a problem, a refusal stay warnings or errors.
   */
  #record(sync: SyncOutcome, summary: RunSummary, dryRun: boolean, reasons: readonly TriggerReason[]): void {
    const { metrics } = this.#d;
    this.#current = runFacts(sync, summary, dryRun);
    metrics.setDrift('sshUser', summary.drift.sshUser);
    metrics.setDrift('apikey', summary.drift.apikey);
    metrics.setUnmanaged('sshUser', summary.unmanaged.sshUser);
    metrics.setUnmanaged('apikey', summary.unmanaged.apikey);
    const notStarted: string[] = [];
    for (const r of sync.results ?? []) {
      metrics.recordChange(r.kind, r.action, r.status);
      // Counted in one line below: after a stop with a deep queue, a line each would bury the rest.
      if (r.notStarted === true) {
        notStarted.push(r.error ?? 'not started');
        continue;
      }
      const line = { kind: r.kind, action: r.action, key: r.key, status: r.status, ...(r.drift ? { drift: r.drift } : {}), ...(r.error ? { error: r.error } : {}), ...(r.approval ? { approval: r.approval } : {}) };
      if (r.status === 'failed') this.#log.warn(line, 'change failed');
      else this.#log.debug(line, r.status === 'applied' ? 'change applied' : 'change skipped');
    }
    // Only a stopped run has some (the daemon's stop): one line at info, saying why.
    if (notStarted.length > 0) this.#log.info({ notStarted: notStarted.length, reason: notStarted[0] }, `${notStarted.length} change${notStarted.length === 1 ? '' : 's'} not started (never sent): ${notStarted[0]}`);
    for (const p of sync.plan.problems) this.#log.warn({ kind: p.kind, key: p.key, code: p.code }, p.message);
    for (const t of sync.tokenErrors ?? []) this.#log.warn({ kind: 'apikey', key: t.key, code: 'token_file' }, t.error);
    const counts = { ...summary.planned, unmanaged: summary.unmanaged.sshUser + summary.unmanaged.apikey, applied: summary.applied, failed: summary.failed, ...(notStarted.length > 0 ? { notStarted: notStarted.length } : {}) };
    const changes = sync.plan.changes.length;
    if (sync.refusal) {
      this.#lastError = sync.refusal.code;
      this.#log.error({ code: sync.refusal.code, ...counts }, `${dryRun ? 'the plan would be refused' : 'refused'}: ${sync.refusal.message}`);
    } else if (dryRun && changes > 0) {
      const named = sync.plan.changes.slice(0, maxLoggedChanges).map((c) => `${c.action} ${c.kind} ${c.key}`);
      const why = summary.outcome === 'invalid_input' ? 'the desired-state file is invalid' : 'observe mode';
      // Every run while it lasts: the detail at debug; `sync finished` counts it (drift, changes, dryRun).
      this.#log.debug({ ...counts, changes: named, more: Math.max(0, changes - named.length) }, `drift detected; not corrected (${why})`);
    }
    if (summary.failed > 0 || summary.skipped > 0) this.#lastError = 'changes_failed';
    else if (summary.problems > 0 && summary.outcome === 'partial') this.#lastError = 'plan_problems';
    else if (summary.tokenErrors > 0 && summary.outcome === 'partial') this.#lastError = 'token_files';
    this.#log.info(runLine(sync, summary, { dryRun, reasons, counts, durationMs: Math.max(0, this.#d.timers.now() - this.#startedMs) }), 'sync finished');
  }

  #finish(outcome: RunOutcome, started: number): void {
    const { metrics, timers } = this.#d;
    const seconds = Math.max(0, timers.now() - started) / 1000;
    this.#lastOutcome = outcome;
    if (outcome === 'success') {
      this.#failures = 0;
      this.#lastError = undefined;
      this.#lastSuccessAt = timers.wallNow();
      metrics.setLastSuccess(this.#lastSuccessAt);
    } else if (outcome !== 'invalid_input') {
      this.#failures += 1;
    }
    metrics.setConsecutiveFailures(this.#failures);
    metrics.recordRun(outcome, seconds);
  }

  /** The run that just ended, as the status page tells it: its facts, or only its outcome and error. */
  #rememberRun(reasons: readonly TriggerReason[], outcome: RunOutcome, startedAt: number): void {
    const facts = this.#current ?? { dryRun: false, drift: 0, applied: 0, changes: [], failures: [] };
    const invalid = outcome === 'invalid_input' ? 'the desired-state file is invalid: nothing is applied until it is fixed (see the log)' : null;
    const error = outcome === 'success' ? null : (this.#current?.error ?? invalid ?? this.#lastError ?? null);
    this.#lastRun = {
      startedAt: new Date(startedAt).toISOString(),
      finishedAt: new Date(this.#d.timers.wallNow()).toISOString(),
      trigger: [...reasons],
      outcome,
      ...facts,
      error: error === null ? null : oneLine(error),
    };
  }

  #logDiagnostics(message: string, diagnostics: readonly Diagnostic[], summary: string): void {
    const errors = diagnostics.filter((d) => d.severity === 'error');
    this.#log.error({ errors: errors.length }, `${summary}: ${message}`);
    for (const d of diagnostics.slice(0, maxLoggedDiagnostics)) {
      if (d.severity === 'error') this.#log.error(diagnosticFields(d), formatDiagnostic(d));
      else this.#log.warn(diagnosticFields(d), formatDiagnostic(d));
    }
    if (diagnostics.length > maxLoggedDiagnostics) this.#log.error(`... and ${diagnostics.length - maxLoggedDiagnostics} more`);
  }
}

/** A diagnostic's fields for a log line: code and position, so log queries can filter on them. */
function diagnosticFields(d: Diagnostic): Record<string, unknown> {
  const where = d.position ? { file: d.position.file, line: d.position.line, col: d.position.col } : {};
  return { code: d.code, ...where, ...(d.path ? { path: d.path } : {}) };
}

/** A run's changes as the status page lists them: what it wrote, what failed and why (never a value). */
function runFacts(sync: SyncOutcome, summary: RunSummary, dryRun: boolean): Omit<LastRun, 'startedAt' | 'finishedAt' | 'trigger' | 'outcome'> {
  const results = sync.results ?? [];
  const line = (r: (typeof results)[number]) => ({ kind: r.kind, action: r.action, key: r.key });
  const failures: FailureLine[] = [
    ...results.filter((r) => r.status === 'failed').map((r) => ({ ...line(r), reason: oneLine(r.error ?? 'failed') })),
    ...results.filter((r) => r.status === 'skipped' && r.notStarted !== true).map((r) => ({ ...line(r), reason: oneLine(r.error ?? 'skipped: it waited for a change that failed') })),
    ...sync.plan.problems.map((p) => ({ kind: p.kind, action: null, key: p.key, reason: oneLine(`${p.code}: ${p.message}`) })),
    ...(sync.tokenErrors ?? []).map((t) => ({ kind: 'apikey' as const, action: null, key: t.key, reason: oneLine(`token_file: ${t.error}`) })),
  ];
  const drift = summary.drift.sshUser + summary.drift.apikey;
  return {
    dryRun,
    drift,
    applied: summary.applied,
    changes: results.filter((r) => r.status === 'applied').slice(0, maxListedChanges).map(line),
    failures: failures.slice(0, maxListedChanges),
    error: sync.refusal ? oneLine(`${sync.refusal.code}: ${sync.refusal.message}`) : null,
  };
}

/** The first line of a message, at most 300 characters: a reason, not a dump. */
function oneLine(text: string): string {
  const first = text.split('\n', 1)[0]!.trim();
  return first.length > 300 ? `${first.slice(0, 299)}…` : first;
}

/** The one-line message of an error for a notification (the notifier scrubs it). */
function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** At most this many failed changes are named in a run's line (each is a warning of its own too). */
const maxFailuresInRunLine = 5;

/**
 * The fields of a run's one line at info: what started it, whether it wrote, the outcome and
 * counts, how far the service had drifted (`drift`: changes found, observed items included),
 * the changes planned, the first failures in one line each, and how long it took.
 */
export function runLine(
  sync: SyncOutcome,
  summary: RunSummary,
  run: { readonly dryRun: boolean; readonly reasons: readonly TriggerReason[]; readonly counts: Record<string, number>; readonly durationMs: number },
): Record<string, unknown> {
  const failures = (sync.results ?? []).filter((r) => r.status === 'failed').slice(0, maxFailuresInRunLine).map((r) => `${r.action} ${r.kind} ${r.key}: ${r.error ?? 'failed'}`);
  return {
    outcome: summary.outcome,
    reasons: run.reasons,
    dryRun: run.dryRun,
    ...run.counts,
    tokensWritten: sync.tokensWritten,
    changes: sync.plan.changes.length,
    drift: summary.drift.sshUser + summary.drift.apikey,
    ...(failures.length > 0 ? { failures } : {}),
    durationMs: Math.round(run.durationMs),
  };
}
