import type { Diagnostic } from '../model/index.js';
import { Secret } from '../secrets/index.js';
import { diagnosticCodes } from '../model/index.js';
import { quote } from '../yaml/index.js';
import { parseText, rules, type FieldRule } from './field-rules.js';
import type { SettingsLayer } from './settings-schema.js';

type Env = Readonly<Record<string, string | undefined>>;

interface EnvVar {
  readonly name: string;
  /** Where it lands in Settings: a top-level key, or a group and a key. */
  readonly path: readonly [string] | readonly [string, string];
  readonly rule: FieldRule<unknown>;
}

/**
 * Every AMSYNC_* variable that sets a setting. Besides these: AMSYNC_TOKEN (the bearer token),
 * AMSYNC_REFRESH_TOKEN (the integrator key),
 * AMSYNC_SETTINGS (a settings file, like --settings), AMSYNC_FILE (the desired-state file,
 * like -f) and AMSYNC_STATE_KEY (read by the state store).
 */
export const settingsEnvVars: readonly EnvVar[] = [
  { name: 'AMSYNC_URL', path: ['url'], rule: rules.url },
  { name: 'AMSYNC_TOKEN_FILE', path: ['tokenFile'], rule: rules.path },
  { name: 'AMSYNC_REFRESH_TOKEN_FILE', path: ['refreshTokenFile'], rule: rules.path },
  { name: 'AMSYNC_STATE_FILE', path: ['stateFile'], rule: rules.path },
  { name: 'AMSYNC_TOKENS_DIR', path: ['tokensDir'], rule: rules.path },
  { name: 'AMSYNC_HTTP_TIMEOUT_MS', path: ['http', 'timeoutMs'], rule: rules.int1 },
  { name: 'AMSYNC_CA_FILE', path: ['http', 'caFile'], rule: rules.path },
  { name: 'AMSYNC_ALLOW_INSECURE_HTTP', path: ['http', 'allowInsecureHttp'], rule: rules.boolean },
  { name: 'AMSYNC_HTTP_MAX_RESPONSE_BYTES', path: ['http', 'maxResponseBytes'], rule: rules.int1 },
  { name: 'AMSYNC_RATE', path: ['rate'], rule: rules.positiveNumber },
  { name: 'AMSYNC_INITIAL_RATE', path: ['initialRate'], rule: rules.positiveNumber },
  { name: 'AMSYNC_CONCURRENCY', path: ['concurrency'], rule: rules.int1 },
  { name: 'AMSYNC_RETRY_MAX_ATTEMPTS', path: ['retry', 'maxAttempts'], rule: rules.int1 },
  { name: 'AMSYNC_RETRY_MAX_ELAPSED_MS', path: ['retry', 'maxElapsedMs'], rule: rules.int0 },
  { name: 'AMSYNC_PAGE_SIZE', path: ['pageSize'], rule: rules.int1 },
  { name: 'AMSYNC_LIST_DEADLINE_MS', path: ['listDeadlineMs'], rule: rules.int1 },
  { name: 'AMSYNC_MAX_DELETES', path: ['maxDeletes'], rule: rules.int0 },
  { name: 'AMSYNC_LOCK_TIMEOUT_MS', path: ['lockTimeoutMs'], rule: rules.int0 },
  { name: 'AMSYNC_DAEMON_SCHEDULE', path: ['daemon', 'schedule'], rule: rules.cron },
  { name: 'AMSYNC_DAEMON_LISTEN', path: ['daemon', 'listen'], rule: rules.listen },
  { name: 'AMSYNC_DAEMON_MODE', path: ['daemon', 'mode'], rule: rules.mode },
  { name: 'AMSYNC_LEADER_ELECT', path: ['daemon', 'leaderElect'], rule: rules.leaseRef },
  { name: 'AMSYNC_DAEMON_RUN_DEADLINE_MS', path: ['daemon', 'runDeadlineMs'], rule: rules.int1 },
  { name: 'AMSYNC_DAEMON_APPROVALS_FILE', path: ['daemon', 'approvalsFile'], rule: rules.path },
  { name: 'AMSYNC_LOG_LEVEL', path: ['logLevel'], rule: rules.logLevel },
];

export interface EnvSettings {
  readonly layer: SettingsLayer;
  readonly token?: Secret;
  readonly refreshToken?: Secret;
  readonly errors: readonly Diagnostic[];
}

/**
 * The AMSYNC_* environment -> one settings layer. Pure. An empty variable counts as unset
 * (the way compose files and CI templates leave them). A bad value is an error naming the
 * variable; the token's value is never looked at beyond being non-empty.
 */
export function settingsFromEnv(env: Env): EnvSettings {
  const layer: Record<string, unknown> = {};
  const errors: Diagnostic[] = [];
  for (const v of settingsEnvVars) {
    const text = env[v.name];
    if (text === undefined || text === '') continue;
    const parsed = parseText(v.rule, text);
    if (!parsed.ok) {
      errors.push({ severity: 'error', code: diagnosticCodes.invalidEnv, path: v.name, message: `${v.name} must be ${parsed.expected}, got ${quote(text)}` });
      continue;
    }
    setIn(layer, v.path, parsed.value);
  }
  const token = env.AMSYNC_TOKEN;
  const refreshToken = env.AMSYNC_REFRESH_TOKEN;
  return { layer: layer as SettingsLayer, ...(token ? { token: new Secret(token) } : {}), ...(refreshToken ? { refreshToken: new Secret(refreshToken) } : {}), errors };
}

export function setIn(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  const [head, key] = path;
  if (head === undefined) return;
  if (key === undefined) {
    target[head] = value;
    return;
  }
  const group = (target[head] as Record<string, unknown> | undefined) ?? {};
  group[key] = value;
  target[head] = group;
}
