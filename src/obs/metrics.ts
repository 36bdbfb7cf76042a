import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { notifyEventNames } from '../model/index.js';

/**
 * amsync's Prometheus metrics: one Registry per process part that wants one (never
 * prom-client's global registry, so tests and an embedding program cannot collide), and
 * plain helpers that the client's events and the daemon feed.
 *
 * Labels carry only closed sets (kind, action, outcome, method, status, reason) and the
 * client's route templates: never a username, apikey name, id, token or password. Every
 * helper normalises its label values, so a caller cannot widen them by mistake.
 */

export type MetricKind = 'sshUser' | 'apikey';
export type MetricAction = 'create' | 'update' | 'delete';
/** How one change ended (ChangeResult.status). */
export type ChangeOutcome = 'applied' | 'failed' | 'skipped';
/**
 * How one daemon run ended: `success` (converged, or planned in observe mode), `partial`
 * (some changes failed), `refused` (a safety guard), `failure` (the service or network),
 * `invalid_input` (the file is invalid: only the last good state was planned, nothing applied).
 */
export type RunOutcome = 'success' | 'partial' | 'refused' | 'failure' | 'invalid_input';

export const runOutcomes: readonly RunOutcome[] = ['success', 'partial', 'refused', 'failure', 'invalid_input'];
export const metricKinds: readonly MetricKind[] = ['sshUser', 'apikey'];

export interface ApiRequestSample {
  readonly method: string;
  /** Route template from the client (`/api/sshusers/{id}`). */
  readonly route: string;
  /** HTTP status; undefined when no answer came (then `error` names why). */
  readonly status: number | undefined;
  /** `timeout`, `network`, an errno code... when no answer came. */
  readonly error?: string | undefined;
  readonly durationMs?: number;
}

export interface ApiRetrySample {
  readonly method: string;
  readonly route: string;
  /** The error code the failed attempt would have ended with (`unavailable`, `timeout`...). */
  readonly reason: string;
}

export interface ApiThrottleSample {
  readonly method: string;
  readonly route: string;
  /** 503 or 429. */
  readonly status: number;
}

export interface MetricsOptions {
  /** amsync's version, for `amsync_build_info`. */
  readonly version: string;
  /** @default process.version */
  readonly nodeVersion?: string;
  /** Add prom-client's process_* and nodejs_* metrics (CPU, memory, event loop). @default false */
  readonly processMetrics?: boolean;
}

/** What the daemon records; a subset so tests can pass a fake. */
export interface DaemonMetrics {
  recordRun(outcome: RunOutcome, durationSeconds: number): void;
  recordChange(kind: MetricKind, action: MetricAction, outcome: ChangeOutcome): void;
  /** Changes planned at the start of the last run that reached the service, by kind. */
  setDrift(kind: MetricKind, items: number): void;
  setUnmanaged(kind: MetricKind, items: number): void;
  setConfigValid(valid: boolean): void;
  /** Wall-clock epoch milliseconds. */
  setLastSuccess(epochMs: number): void;
  setRunning(running: boolean): void;
  setConsecutiveFailures(count: number): void;
  setReady(ready: boolean): void;
  /** A run passed its deadline and was abandoned. */
  recordAbandoned(): void;
  /** Changes the policy gates that wait for an approval (not written), as of the last run. */
  setPendingApprovals(count: number): void;
  /**
   * Expiries (`expires:` / `ttl:`) as of the last run: the next one (epoch ms; undefined: none)
   * and how many items expire within 24 hours. Optional: a fake in a test may leave it out.
   */
  setExpiries?(nextEpochMs: number | undefined, expiringWithinDay: number): void;
}

/** What the service client's events feed. */
export interface ClientMetrics {
  observeApiRequest(sample: ApiRequestSample): void;
  observeRetry(sample: ApiRetrySample): void;
  observeThrottle(sample: ApiThrottleSample): void;
  /** The adaptive limiter's current rate, requests per second. */
  setLimiterRate(rate: number): void;
  /** What happened to the integrator key (the client's `credential` event). */
  observeCredential(sample: CredentialSample): void;
}

/** The client's credential event, as far as metrics need it: what happened, never a token. */
export interface CredentialSample {
  readonly action: string;
  readonly persisted?: boolean;
}

const credentialOutcomes = ['exchanged', 'renewed', 'renewal_deferred', 'rejected'] as const;

/** How one webhook notification ended: delivered, given up on, or never tried (queue full, shutdown). */
export type NotificationOutcome = 'sent' | 'failed' | 'dropped';
export const notificationOutcomes: readonly NotificationOutcome[] = ['sent', 'failed', 'dropped'];

/** What the notifier records; a subset so tests can pass a fake. */
export interface NotificationMetrics {
  /** `event` is one of the notifier's event names; anything else is counted as `other`. */
  recordNotification(event: string, outcome: NotificationOutcome): void;
}

export interface AmsyncMetrics extends DaemonMetrics, ClientMetrics, NotificationMetrics {
  readonly registry: Registry;
  /** Leader election: whether this replica holds the Lease (may write). */
  setLeader(leading: boolean): void;
  /** `amsync ctl suspend`: whether the daemon is suspended (observes only). */
  setSuspended(suspended: boolean): void;
  /** daemon.windows: whether the sync windows let runs write now. */
  setSyncWindowOpen(open: boolean): void;
  /** The exposition text and its content type, for GET /metrics. */
  render(): Promise<{ contentType: string; body: string }>;
}

export function createMetrics(options: MetricsOptions): AmsyncMetrics {
  const registry = new Registry();
  const registers = [registry];
  if (options.processMetrics) addProcessMetrics(registry);
  buildInfo(registers, options);
  // The groups register their families in this order, the order of the exposition text. Each
  // sets its series to their start values: a series that exists from the start reads as 0
  // instead of being absent, so alerts on `amsync_config_valid == 0` or on a rate of failures
  // work from the first scrape.
  return {
    registry,
    async render() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
    ...runMetrics(registers),
    ...daemonStateMetrics(registers),
    ...apiMetrics(registers),
    ...credentialMetrics(registers),
    ...notificationMetrics(registers),
  };
}

type Registers = Registry[];
type RunRecorder = Pick<DaemonMetrics, 'recordRun' | 'recordChange' | 'setDrift' | 'setUnmanaged'>;

function buildInfo(registers: Registers, options: MetricsOptions): void {
  const info = new Gauge({
    name: 'amsync_build_info',
    help: 'Always 1; the labels say which amsync and which Node.js run.',
    labelNames: ['version', 'node_version'] as const,
    registers,
  });
  info.set({ version: cleanFree(options.version), node_version: cleanFree(options.nodeVersion ?? process.version) }, 1);
}

/** What each daemon run records: its outcome and duration, its changes, the drift and the unmanaged items it found. */
function runMetrics(registers: Registers): RunRecorder {
  const runs = new Counter({
    name: 'amsync_sync_runs_total',
    help: 'Sync runs by outcome: success, partial (some changes failed), refused (safety guard), failure (service or network), invalid_input.',
    labelNames: ['outcome'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'amsync_sync_duration_seconds',
    help: 'Duration of sync runs (load, list, plan and apply), by outcome.',
    labelNames: ['outcome'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
    registers,
  });
  const changes = new Counter({
    name: 'amsync_changes_total',
    help: 'Changes the daemon applied, by kind, action and outcome (applied, failed, skipped).',
    labelNames: ['kind', 'action', 'outcome'] as const,
    registers,
  });
  const drift = new Gauge({
    name: 'amsync_drifted_items',
    help: 'Items that differed from the desired state at the start of the last run that reached the service, by kind.',
    labelNames: ['kind'] as const,
    registers,
  });
  const unmanaged = new Gauge({
    name: 'amsync_unmanaged_items',
    help: 'Remote items neither declared nor pruned, as of the last run that reached the service, by kind.',
    labelNames: ['kind'] as const,
    registers,
  });
  for (const outcome of runOutcomes) runs.inc({ outcome }, 0);
  for (const kind of metricKinds) {
    drift.set({ kind }, 0);
    unmanaged.set({ kind }, 0);
  }
  return {
    recordRun(outcome, seconds) {
      const o = oneOf(outcome, runOutcomes, 'failure');
      runs.inc({ outcome: o });
      duration.observe({ outcome: o }, Math.max(0, seconds));
    },
    recordChange(kind, action, outcome) {
      changes.inc({ kind: oneOf(kind, metricKinds, 'other'), action: oneOf(action, actions, 'other'), outcome: oneOf(outcome, changeOutcomes, 'other') });
    },
    setDrift: (kind, items) => drift.set({ kind: oneOf(kind, metricKinds, 'other') }, items),
    setUnmanaged: (kind, items) => unmanaged.set({ kind: oneOf(kind, metricKinds, 'other') }, items),
  };
}

/** The daemon's state between runs: config validity, last success, readiness, the Lease, pending approvals. */
function daemonStateMetrics(registers: Registers): Omit<DaemonMetrics, keyof RunRecorder> & Pick<AmsyncMetrics, 'setLeader' | 'setSuspended' | 'setSyncWindowOpen'> {
  const configValid = new Gauge({
    name: 'amsync_config_valid',
    help: '1 when the desired-state file (and settings) last loaded without error, else 0.',
    registers,
  });
  const lastSuccess = new Gauge({
    name: 'amsync_last_successful_sync_timestamp_seconds',
    help: 'Unix time of the end of the last successful sync run; 0 before the first.',
    registers,
  });
  const running = new Gauge({ name: 'amsync_sync_in_progress', help: '1 while a sync run is in progress.', registers });
  const failures = new Gauge({
    name: 'amsync_consecutive_failed_runs',
    help: 'Failed runs (partial, refused, failure) since the last successful one.',
    registers,
  });
  const ready = new Gauge({ name: 'amsync_ready', help: 'What /readyz answers: 1 ready, 0 not.', registers });
  const leader = new Gauge({
    name: 'amsync_leader',
    help: '1 while this replica may write (it holds the Lease, or leader election is off); 0 while it only observes.',
    registers,
  });
  const abandoned = new Counter({
    name: 'amsync_sync_runs_abandoned_total',
    help: 'Runs that passed the run deadline (daemon.runDeadlineMs) and were abandoned, their requests cancelled. Each also counts as a failure in amsync_sync_runs_total.',
    registers,
  });
  const pendingApprovals = new Gauge({
    name: 'amsync_pending_approvals',
    help: 'Changes that need an approval (superuser, approveRoles, approveDeletesOver) and have none, so the daemon has not written them, as of the last run that applied.',
    registers,
  });
  const suspended = new Gauge({ name: 'amsync_suspended', help: '1 while the daemon is suspended (amsync ctl suspend): it plans and reports drift, writes nothing.', registers });
  const windowOpen = new Gauge({
    name: 'amsync_sync_window_open',
    help: '1 while the sync windows (daemon.windows) let runs write; 0 inside a deny window or outside every allow window.',
    registers,
  });
  const nextExpiry = new Gauge({
    name: 'amsync_next_expiry_timestamp_seconds',
    help: 'Unix time of the next expiry (expires: / ttl:) of a declared item, as of the last run; 0 when none expires.',
    registers,
  });
  const expiring = new Gauge({ name: 'amsync_items_expiring', help: 'Declared items that expire within 24 hours, as of the last run.', registers });
  nextExpiry.set(0);
  expiring.set(0);
  suspended.set(0);
  windowOpen.set(1);
  configValid.set(1);
  lastSuccess.set(0);
  running.set(0);
  failures.set(0);
  ready.set(0);
  leader.set(1);
  pendingApprovals.set(0);
  abandoned.inc(0);
  return {
    setConfigValid: (valid) => configValid.set(valid ? 1 : 0),
    setLastSuccess: (epochMs) => lastSuccess.set(epochMs / 1000),
    setRunning: (on) => running.set(on ? 1 : 0),
    setConsecutiveFailures: (count) => failures.set(count),
    setReady: (on) => ready.set(on ? 1 : 0),
    setLeader: (on) => leader.set(on ? 1 : 0),
    setSuspended: (on) => suspended.set(on ? 1 : 0),
    setSyncWindowOpen: (open) => windowOpen.set(open ? 1 : 0),
    recordAbandoned: () => abandoned.inc(),
    setPendingApprovals: (count) => pendingApprovals.set(Number.isFinite(count) && count >= 0 ? count : 0),
    setExpiries: (next, soon) => {
      nextExpiry.set(next === undefined ? 0 : next / 1000);
      expiring.set(soon);
    },
  };
}

/** The service client's requests: attempts, durations, retries, push-back, the limiter's rate. */
function apiMetrics(registers: Registers): Omit<ClientMetrics, 'observeCredential'> {
  const requests = new Counter({
    name: 'amsync_api_requests_total',
    help: 'Attempts of requests to the service, by method, route template and status (or error when no answer came).',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  });
  const requestDuration = new Histogram({
    name: 'amsync_api_request_duration_seconds',
    help: 'Duration of attempts of requests to the service, by method and route template.',
    labelNames: ['method', 'route'] as const,
    // Fewer buckets than the run histogram: this one is multiplied by every method and route.
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 30],
    registers,
  });
  const retries = new Counter({
    name: 'amsync_api_retries_total',
    help: 'Failed attempts that were repeated, by method, route template and reason.',
    labelNames: ['method', 'route', 'reason'] as const,
    registers,
  });
  const throttles = new Counter({
    name: 'amsync_api_throttled_total',
    help: 'Answers that pushed back (503, 429) and slowed the rate limiter, by method, route template and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  });
  const limiterRate = new Gauge({
    name: 'amsync_rate_limiter_rate',
    help: "The adaptive rate limiter's current rate, requests per second.",
    registers,
  });
  const routes = new RouteLabels();
  return {
    observeApiRequest(sample) {
      const method = methodLabel(sample.method);
      const route = routes.label(sample.route);
      requests.inc({ method, route, status: statusLabel(sample.status, sample.error) });
      if (sample.durationMs !== undefined && Number.isFinite(sample.durationMs)) {
        requestDuration.observe({ method, route }, Math.max(0, sample.durationMs) / 1000);
      }
    },
    observeRetry(sample) {
      retries.inc({ method: methodLabel(sample.method), route: routes.label(sample.route), reason: codeLabel(sample.reason) });
    },
    observeThrottle(sample) {
      throttles.inc({ method: methodLabel(sample.method), route: routes.label(sample.route), status: statusLabel(sample.status, undefined) });
    },
    setLimiterRate(rate) {
      if (Number.isFinite(rate) && rate >= 0) limiterRate.set(rate);
    },
  };
}

/** The integrator key: its exchanges for access tokens, and whether a rotated key reached its file. */
function credentialMetrics(registers: Registers): Pick<ClientMetrics, 'observeCredential'> {
  const renewals = new Counter({
    name: 'amsync_access_token_renewals_total',
    help: 'Exchanges of the integrator key for access tokens, by outcome: exchanged (the first), renewed, renewal_deferred (failed while the token still worked), rejected.',
    labelNames: ['outcome'] as const,
    registers,
  });
  const keyPersisted = new Gauge({
    name: 'amsync_integrator_key_persisted',
    help: '0 when the service rotated the integrator key and amsync could not write it back to its file, or it came from AMSYNC_REFRESH_TOKEN (a restart would use the retired key; /readyz is 503); else 1.',
    registers,
  });
  keyPersisted.set(1);
  return {
    observeCredential(sample) {
      if ((credentialOutcomes as readonly string[]).includes(sample.action)) renewals.inc({ outcome: sample.action });
      // A key from AMSYNC_REFRESH_TOKEN that rotated has no file to go to: as lost on a restart.
      if (sample.action === 'write_back_failed' || (sample.action === 'rotated' && sample.persisted === false)) keyPersisted.set(0);
      if (sample.action === 'rotated' && sample.persisted === true) keyPersisted.set(1);
    },
  };
}

function notificationMetrics(registers: Registers): NotificationMetrics {
  const notifications = new Counter({
    name: 'amsync_notifications_total',
    help: 'Webhook notifications by event and outcome: sent, failed (refused, or every attempt failed), dropped (the queue was full, or amsync shut down first).',
    labelNames: ['event', 'outcome'] as const,
    registers,
  });
  for (const event of notifyEventNames) for (const outcome of notificationOutcomes) notifications.inc({ event, outcome }, 0);
  return {
    recordNotification(event, outcome) {
      notifications.inc({ event: oneOf(event, notifyEventNames, 'other'), outcome: oneOf(outcome, notificationOutcomes, 'other') });
    },
  };
}

/**
 * prom-client's standard process_* and nodejs_* metrics, less those whose names break the
 * conventions `promtool check metrics` enforces: `nodejs_active_handles_total`,
 * `nodejs_active_requests_total` and `nodejs_active_resources_total` are gauges named like
 * counters (promtool exits 3 on them). Each is the sum of a gauge that stays, by type
 * (`sum(nodejs_active_handles)`), so nothing is lost. Any future default metric that breaks the
 * same rule goes the same way; test/unit/obs/metrics-conventions.test.ts lints the rest.
 */
function addProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry });
  for (const metric of registry.getMetricsAsArray()) {
    // prom-client's typings declare `type` a numeric enum; at run time it is the type's name.
    const type: unknown = metric.type;
    if (type !== 'counter' && metric.name.endsWith('_total')) registry.removeSingleMetric(metric.name);
  }
}

const actions: readonly MetricAction[] = ['create', 'update', 'delete'];
const changeOutcomes: readonly ChangeOutcome[] = ['applied', 'failed', 'skipped'];
const methods = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

function oneOf<T extends string>(value: string, allowed: readonly T[], fallback: string): string {
  return (allowed as readonly string[]).includes(value) ? value : fallback;
}

function methodLabel(method: string): string {
  const m = String(method).toUpperCase();
  return methods.has(m) ? m : 'OTHER';
}

/** `200`, `503`; without an answer the failure's code (`timeout`, `network`, `econnreset`). */
function statusLabel(status: number | undefined, error: string | undefined): string {
  if (status !== undefined && Number.isInteger(status) && status >= 100 && status <= 599) return String(status);
  return error === undefined ? 'none' : codeLabel(error);
}

/** Error codes are identifiers; anything else (a message, a path) becomes `other`. */
function codeLabel(code: string): string {
  const c = String(code).toLowerCase();
  return /^[a-z][a-z0-9_]{0,31}$/.test(c) ? c : 'other';
}

/** Free text from our own build (version strings): printable, bounded. */
function cleanFree(text: string): string {
  return text.replace(/[^\w.+-]/g, '_').slice(0, 64);
}

// The API's words, the token endpoint and user info included (as the real service does).
const staticSegments = new Set(['api', '3rdparty', 'sshusers', 'apikeys', 'roles', 'v1', 'oauth2', 'token', 'user', 'info']);

/**
 * Route labels stay templates. The client passes `/api/sshusers/{id}`; should a concrete
 * path ever arrive, every segment that is not one of the API's words (the service's API specification) becomes a
 * placeholder, and past a bound on distinct routes everything is `other`: no label can carry
 * an item's name or id, and the number of series stays bounded.
 */
class RouteLabels {
  static readonly maxRoutes = 32;
  readonly #seen = new Set<string>();

  label(route: string): string {
    const path = String(route).split(/[?#]/, 1)[0] ?? '';
    if (!path.startsWith('/')) return 'other';
    const segments = path
      .split('/')
      .slice(1)
      .map((segment, index) => {
        if (/^\{[A-Za-z]\w{0,31}\}$/.test(segment)) return segment;
        if (/^\d+$/.test(segment)) return '{id}';
        // Only the API's own words stay verbatim: an item's name is never one of them.
        if (index < 4 && staticSegments.has(segment)) return segment;
        return '{param}';
      });
    const label = `/${segments.slice(0, 5).join('/')}`;
    if (this.#seen.has(label)) return label;
    if (this.#seen.size >= RouteLabels.maxRoutes) return 'other';
    this.#seen.add(label);
    return label;
  }
}
