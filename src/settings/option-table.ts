import { rules, webhooksRule, windowsRule, type FieldRule } from './field-rules.js';
import { logLevels } from './settings.js';
import { retryDefaults } from './retry-defaults.js';
import type { Settings } from './settings.js';

/** The groups of nested settings (`http.timeoutMs`). */
export const settingGroups = ['http', 'retry', 'daemon', 'notify'] as const;
type Group = (typeof settingGroups)[number];

/** Every path a setting can have: a top-level key, or a group and a key. Checked by the compiler. */
type Settable = Omit<Settings, 'token' | 'refreshToken' | Group>;
export type SettingPath = { [K in keyof Settable]-?: readonly [K] }[keyof Settable] | { [G in Group]-?: { [K in keyof Settings[G]]-?: readonly [G, K] }[keyof Settings[G]] }[Group];

/**
 * One setting, declared once. The settings-file schema (and from it the JSON Schema), the
 * AMSYNC_* variables, the flags' targets and the built-in defaults are all made from this
 * table; config/default.yaml and README's settings table are checked against it by
 * test/unit/settings/views-agree.test.ts. Adding a setting is adding a row here.
 */
export interface SettingOption {
  readonly path: SettingPath;
  readonly rule: FieldRule<unknown>;
  /** The built-in default; absent for a setting that is off until set (a file may say `null`). */
  readonly default?: unknown;
  /** The AMSYNC_* variable that sets it, if any. */
  readonly env?: `AMSYNC_${string}`;
  /** The flag that sets it, if any. `switch`: a flag without value that only turns it on. */
  readonly flag?: `--${string}`;
  readonly switch?: boolean;
  /** The flag's placeholder in help (`--rate <N>`); absent for a switch. */
  readonly arg?: string;
  /** The flag's help line; the variable and the default are added from this row (settings/setting-flags.ts). */
  readonly help?: string;
  /** How help states the default when the value alone would not say it (`32 MiB`, what 0 means). */
  readonly helpDefault?: string;
  /** For the JSON Schema and editors; config/default.yaml carries the longer story. */
  readonly description: string;
}

export const settingOptions: readonly SettingOption[] = [
  { path: ['url'], arg: 'URL', help: 'base URL of the service, no default', rule: rules.url, env: 'AMSYNC_URL', flag: '--url', description: 'Base URL of the service. No default.' },
  { path: ['tokenFile'], arg: 'PATH', help: 'file holding the bearer token, re-read on 401; the token itself only via AMSYNC_TOKEN', rule: rules.path, env: 'AMSYNC_TOKEN_FILE', flag: '--token-file', description: 'File holding the bearer token, re-read on 401. The token itself only comes from AMSYNC_TOKEN.' },
  {
    path: ['refreshTokenFile'],
    rule: rules.path,
    env: 'AMSYNC_REFRESH_TOKEN_FILE',
    flag: '--refresh-token-file', arg: 'PATH', help: 'file holding the integrator key (a refresh token from the service\'s UI), exchanged for access tokens and renewed; a rotated key is written back; the key itself only via AMSYNC_REFRESH_TOKEN',
    description: 'File holding the integrator key (a refresh token), exchanged for access tokens and renewed before they expire; a rotated key is written back to it, 0600. Not together with a token. The key itself only comes from AMSYNC_REFRESH_TOKEN.',
  },
  {
    path: ['integratorKeySecret'],
    rule: rules.kubeSecretKeyRef,
    env: 'AMSYNC_INTEGRATOR_KEY_SECRET',
    description:
      'NAMESPACE/NAME[/KEY] of a Kubernetes Secret holding the integrator key instead of a file: read before each exchange, and a rotated key is written back to that data key (KEY, default integrator-key) with the resourceVersion it was read at. The Secret must exist. Not together with a token or another integrator key.',
  },
  { path: ['stateFile'], arg: 'PATH', help: 'password fingerprints of the last apply', rule: rules.path, default: '.amsync/state.json', env: 'AMSYNC_STATE_FILE', flag: '--state-file', description: 'Where password fingerprints of the last apply are kept.' },
  { path: ['tokensDir'], arg: 'DIR', help: 'write new apikey tokens here, one 0600 file each', rule: rules.path, env: 'AMSYNC_TOKENS_DIR', flag: '--tokens-dir', description: 'Folder new apikey tokens are written to, one 0600 file per key.' },
  {
    path: ['kubernetesSecret'],
    rule: rules.kubeSecretRef,
    env: 'AMSYNC_KUBERNETES_SECRET',
    flag: '--kubernetes-secret', arg: 'NAMESPACE/NAME', help: 'write new apikey tokens and generated passwords to this Kubernetes Secret, one data key each',
    description:
      'NAMESPACE/NAME of a Kubernetes Secret new apikey tokens and generated SSH passwords are written to instead of files, one data key per item (a password under password__<username>; created when missing; other data keys are left alone). Not together with tokensDir.',
  },
  { path: ['http', 'timeoutMs'], rule: rules.int1, default: 30_000, env: 'AMSYNC_HTTP_TIMEOUT_MS', description: 'Per-request timeout in milliseconds.' },
  { path: ['http', 'caFile'], arg: 'PATH', help: 'PEM bundle of a private CA; TLS verification stays on', rule: rules.path, env: 'AMSYNC_CA_FILE', flag: '--ca-file', description: 'PEM bundle of a private CA. TLS verification is always on.' },
  { path: ['http', 'allowInsecureHttp'], help: 'allow plain http:// to a host that is not loopback', rule: rules.boolean, default: false, env: 'AMSYNC_ALLOW_INSECURE_HTTP', flag: '--allow-insecure-http', switch: true, description: 'Allow plain http:// to a host that is not loopback.' },
  {
    path: ['http', 'maxResponseBytes'],
    rule: rules.int1,
    default: 32 * 1024 * 1024,
    env: 'AMSYNC_HTTP_MAX_RESPONSE_BYTES',
    flag: '--max-response-bytes', arg: 'N', help: 'largest answer body read; a larger one is an error', helpDefault: '33554432, 32 MiB',
    description: 'Largest answer body read, in bytes (decompressed); a larger one is an error and is not read further.',
  },
  { path: ['rate'], arg: 'N', help: 'ceiling in requests per second', helpDefault: 'none, adaptive', rule: rules.positiveNumber, env: 'AMSYNC_RATE', flag: '--rate', description: 'Ceiling in requests per second. null: none; the adaptive limiter finds the limit.' },
  {
    path: ['initialRate'],
    rule: rules.positiveNumber,
    default: 10,
    env: 'AMSYNC_INITIAL_RATE',
    description: 'Requests per second the adaptive limiter starts at for calls that queue up, e.g. writes; until the first sign of a limit, a call that finds nothing queued goes out at once.',
  },
  { path: ['concurrency'], arg: 'N', help: 'requests in flight at most', rule: rules.int1, default: 64, env: 'AMSYNC_CONCURRENCY', flag: '--concurrency', description: 'Requests in flight at most: a ceiling; below it the limiter keeps what the rate needs at the measured latency.' },
  { path: ['retry', 'maxAttempts'], rule: rules.int1, default: retryDefaults.maxAttempts, env: 'AMSYNC_RETRY_MAX_ATTEMPTS', description: 'Attempts per request, the first included.' },
  { path: ['retry', 'baseDelayMs'], rule: rules.int0, default: retryDefaults.baseDelayMs, description: 'First backoff step in milliseconds; full jitter.' },
  { path: ['retry', 'maxDelayMs'], rule: rules.int0, default: retryDefaults.maxDelayMs, description: 'Longest single backoff in milliseconds.' },
  { path: ['retry', 'maxElapsedMs'], rule: rules.int0, default: retryDefaults.maxElapsedMs, env: 'AMSYNC_RETRY_MAX_ELAPSED_MS', description: 'Give up retrying a request after this long.' },
  { path: ['retry', 'retryAfterCapMs'], rule: rules.int0, default: retryDefaults.maxRetryAfterMs, description: 'Longest Retry-After honoured, in milliseconds.' },
  { path: ['pageSize'], arg: 'N', help: 'the largest list page asked for; the service\'s own largest is learned below it', rule: rules.int1, default: 1000, env: 'AMSYNC_PAGE_SIZE', flag: '--page-size', description: "The largest list page asked for; the service's own largest is learned below it." },
  { path: ['listDeadlineMs'], arg: 'MS', help: 'a listing that takes longer is incomplete and nothing is planned', rule: rules.int1, default: 300_000, env: 'AMSYNC_LIST_DEADLINE_MS', flag: '--list-deadline-ms', description: 'A listing that takes longer than this, in milliseconds, is incomplete: nothing is planned from it.' },
  { path: ['maxDeletes'], arg: 'N', help: 'refuse a plan with more deletes than N', rule: rules.int0, default: 10, env: 'AMSYNC_MAX_DELETES', flag: '--max-deletes', description: 'A plan with more deletes than this is refused, exit 3.' },
  {
    path: ['lockTimeoutMs'],
    rule: rules.int0,
    default: 0,
    env: 'AMSYNC_LOCK_TIMEOUT_MS',
    flag: '--lock-timeout', arg: 'MS', help: 'wait this long for another writer to finish', helpDefault: '0: exit 3 at once',
    description: 'How long a run that writes waits for the writer lock another run holds, in milliseconds; then exit 3.',
  },
  { path: ['daemon', 'schedule'], arg: 'CRON', help: 'drift-correcting re-sync; five cron fields, or six with seconds first', helpDefault: '"*/5 * * * *"', rule: rules.cron, default: '*/5 * * * *', env: 'AMSYNC_DAEMON_SCHEDULE', flag: '--schedule', description: 'Cron of the periodic re-sync; six fields allow seconds.' },
  { path: ['daemon', 'listen'], arg: 'HOST:PORT', help: 'address of /healthz, /readyz, /metrics and /status', rule: rules.listen, default: '127.0.0.1:9477', env: 'AMSYNC_DAEMON_LISTEN', flag: '--listen', description: 'HOST:PORT of /healthz, /readyz and /metrics.' },
  { path: ['daemon', 'mode'], arg: 'MODE', help: 'apply: correct drift; observe: plan and report drift only', rule: rules.mode, default: 'apply', env: 'AMSYNC_DAEMON_MODE', flag: '--mode', description: 'apply: correct drift; observe: only plan and report it.' },
  { path: ['daemon', 'debounceMs'], rule: rules.int0, default: 1000, description: 'Quiet time after a file change before syncing, in milliseconds.' },
  { path: ['daemon', 'shutdownGraceMs'], rule: rules.int0, default: 30_000, description: 'Time a running sync gets to finish on SIGTERM, in milliseconds.' },
  {
    path: ['daemon', 'leaderElect'],
    rule: rules.leaseRef,
    env: 'AMSYNC_LEADER_ELECT',
    flag: '--leader-elect', arg: 'LEASE', help: 'several replicas: only the holder of this coordination.k8s.io/v1 Lease, lease:NAMESPACE/NAME, writes; the others observe',
    description: 'lease:NAMESPACE/NAME — leader election on a coordination.k8s.io/v1 Lease: only the holder writes, the other replicas observe.',
  },
  {
    path: ['daemon', 'approvalsFile'],
    rule: rules.path,
    env: 'AMSYNC_DAEMON_APPROVALS_FILE',
    flag: '--approvals', arg: 'FILE', help: 'a YAML or JSON list of approval hashes, watched: a change the policy gates is applied once its hash (or its set\'s) is listed; until then it is pending, never applied by the daemon itself',
    description:
      "A YAML or JSON list of approval hashes, watched: a change the policy gates (superuser, approveRoles, approveDeletesOver) is applied once its hash, or its set's, is listed; until then it is pending. Unset: gated changes stay pending.",
  },
  {
    path: ['daemon', 'runDeadlineMs'],
    rule: rules.int1,
    default: 600_000,
    env: 'AMSYNC_DAEMON_RUN_DEADLINE_MS',
    flag: '--run-deadline-ms', arg: 'MS', help: 'abandon a run still going after this long: its requests are cancelled, /healthz and /readyz report it',
    description: 'A run still going after this long, in milliseconds, is abandoned: its requests are cancelled and /healthz and /readyz report it.',
  },
  {
    path: ['daemon', 'windows'],
    rule: windowsRule,
    default: [],
    description:
      'Sync windows, like Argo CD\'s: {kind: deny|allow, schedule: CRON, duration: 2h, timezone: Europe/Berlin}. Inside a deny window, or outside every allow window when there is one, the daemon observes only; `amsync ctl sync --override-window` writes once.',
  },
  {
    path: ['daemon', 'socket'],
    rule: rules.path,
    env: 'AMSYNC_DAEMON_SOCKET',
    flag: '--socket', arg: 'PATH', help: 'the control socket of `amsync ctl`, 0600', helpDefault: 'ctl.sock beside the state file',
    description: 'The Unix socket `amsync ctl` talks to (0600, owner only). Unset: ctl.sock beside the state file.',
  },
  {
    path: ['auditLog'],
    rule: rules.path,
    env: 'AMSYNC_AUDIT_LOG',
    flag: '--audit-log', arg: 'FILE', help: 'append one JSON line per write attempt and per result to FILE, 0600, rotated by size; read it with `amsync audit`',
    description: 'Append one JSON line per write attempt and per result to this file, 0600, rotated by size; `amsync audit FILE` reads it. null: no audit log.',
  },
  {
    path: ['notify', 'webhooks'],
    rule: webhooksRule,
    default: [],
    description: 'Webhooks told about drift, applied changes, failures, pending approvals, leadership changes and invalid config; signed, bounded, never blocking a run.',
  },
  { path: ['notify', 'queueSize'], rule: rules.int1, default: 1000, description: 'Notifications waiting per webhook at most; past it the oldest is dropped and counted in amsync_notifications_total{outcome="dropped"}.' },
  { path: ['notify', 'timeoutMs'], rule: rules.int1, default: 10_000, description: 'Timeout of one delivery attempt, in milliseconds.' },
  { path: ['notify', 'maxAttempts'], rule: rules.int1, default: 5, description: 'Attempts per notification, the first included; exponential backoff with jitter in between.' },
  { path: ['logLevel'], arg: 'LEVEL', help: logLevels.join(', '), rule: rules.logLevel, default: 'info', env: 'AMSYNC_LOG_LEVEL', flag: '--log-level', description: 'Log level.' },
];

/** `http.timeoutMs`: how tests, messages and the README name a setting. */
export const settingName = (option: SettingOption): string => option.path.join('.');

/**
 * The built-in defaults, from the table. They live in code so dist/ needs no file to find; a
 * test keeps config/default.yaml equal to them.
 */
export const defaultSettings: Settings = defaultsFromTable();

function defaultsFromTable(): Settings {
  const out: Record<string, unknown> = Object.fromEntries(settingGroups.map((g) => [g, {}]));
  for (const option of settingOptions) {
    if (option.default === undefined) continue;
    const [head, key] = option.path;
    if (key === undefined) out[head] = option.default;
    else (out[head] as Record<string, unknown>)[key] = option.default;
  }
  return out as unknown as Settings;
}
