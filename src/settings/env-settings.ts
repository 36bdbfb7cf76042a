import type { Diagnostic } from '../model/index.js';
import { Secret } from '../secrets/index.js';
import { diagnosticCodes } from '../model/index.js';
import { quote } from '../yaml/index.js';
import { parseText, type FieldRule } from './field-rules.js';
import { settingOptions, type SettingPath } from './option-table.js';
import type { SettingsLayer } from './settings-schema.js';

type Env = Readonly<Record<string, string | undefined>>;

interface EnvVar {
  readonly name: string;
  /** Where it lands in Settings: a top-level key, or a group and a key. */
  readonly path: SettingPath;
  readonly rule: FieldRule<unknown>;
}

/**
 * Every AMSYNC_* variable that sets a setting, from the option table. Besides these:
 * AMSYNC_TOKEN (the bearer token), AMSYNC_REFRESH_TOKEN (the integrator key),
 * AMSYNC_SETTINGS (a settings file, like --settings), AMSYNC_FILE (the desired-state file,
 * like -f) and AMSYNC_STATE_KEY (read by the state store).
 */
export const settingsEnvVars: readonly EnvVar[] = settingOptions.flatMap((o) => (o.env === undefined ? [] : [{ name: o.env, path: o.path, rule: o.rule }]));

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
