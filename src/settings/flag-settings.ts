import { UsageError } from '../errors.js';
import { quote } from '../yaml/index.js';
import { checkValue, type FieldRule } from './field-rules.js';
import { loadSettings } from './load-settings.js';
import { settingOptions } from './option-table.js';
import { setIn } from './env-settings.js';
import type { DaemonMode, LogLevel, Settings } from './settings.js';
import type { SettingsLayer } from './settings-schema.js';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The flag values a command was given, by commander's camelCase key (`--lock-timeout` ->
 * `lockTimeout`); every key of the option table is read, the others are passed over. A
 * command's own options interface, or any record of values.
 */
export type FlagValues = SettingFlagValues | Readonly<Record<string, unknown>>;

/** The values of the settings' flags (the option table's `flag`s), as commander hands them over. */
export interface SettingFlagValues {
  /** `--settings FILE`. */
  readonly settings?: string;
  readonly url?: string;
  readonly tokenFile?: string;
  readonly refreshTokenFile?: string;
  readonly rate?: number;
  readonly concurrency?: number;
  readonly pageSize?: number;
  readonly listDeadlineMs?: number;
  readonly maxResponseBytes?: number;
  readonly maxDeletes?: number;
  readonly lockTimeout?: number;
  readonly auditLog?: string;
  readonly tokensDir?: string;
  readonly kubernetesSecret?: string;
  readonly stateFile?: string;
  readonly logLevel?: LogLevel;
  readonly allowInsecureHttp?: boolean;
  readonly caFile?: string;
  readonly listen?: string;
  readonly schedule?: string;
  readonly mode?: DaemonMode;
  readonly leaderElect?: string;
  readonly runDeadlineMs?: number;
  /** `--approvals FILE` (daemon). */
  readonly approvals?: string;
  readonly socket?: string;
  /** Only ever set by someone trying `--token`, which is refused. */
  readonly token?: unknown;
  /** Only ever set by someone trying `--refresh-token`, which is refused. */
  readonly refreshToken?: unknown;
}

/** "Expected `--rate` to be a number greater than 0, got 'abc'" — loud, names the flag. */
export function badFlag(flag: string, expected: string, got: unknown): UsageError {
  return new UsageError(`Expected \`${flag}\` to be ${expected}, got ${typeof got === 'string' ? quote(got) : String(got)}`, 'bad_flag_value');
}

export function refreshTokenFlagError(): UsageError {
  return new UsageError(
    'there is no --refresh-token flag: an integrator key on the command line leaks into shell history and process lists; set AMSYNC_REFRESH_TOKEN, or use --refresh-token-file PATH',
    'token_flag',
  );
}

export function tokenFlagError(): UsageError {
  return new UsageError(
    'there is no --token flag: a token on the command line leaks into shell history and process lists; set AMSYNC_TOKEN, or use --token-file PATH',
    'token_flag',
  );
}

/** `--lock-timeout` -> `lockTimeout`: the key commander gives the flag's value under. */
const optionKey = (flag: string): string => flag.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/**
 * Flags and the settings they set, from the option table; each value is re-checked in case it
 * did not come through commander. Switches (a flag that only turns a setting on) are apart.
 */
export const flagTargets: readonly { key: string; flag: string; path: readonly string[]; rule: FieldRule<unknown> }[] = settingOptions.flatMap((o) =>
  o.flag === undefined || o.switch === true ? [] : [{ key: optionKey(o.flag), flag: o.flag, path: o.path, rule: o.rule }],
);
const switchTargets = settingOptions.flatMap((o) => (o.flag !== undefined && o.switch === true ? [{ key: optionKey(o.flag), path: o.path }] : []));

/** The settings layer the flags make; a bad value is a UsageError naming the flag. */
export function settingsFromFlags(flags: FlagValues): SettingsLayer {
  const opts = flags as SettingFlagValues;
  if (opts.token !== undefined) throw tokenFlagError();
  if (opts.refreshToken !== undefined) throw refreshTokenFlagError();
  const layer: Record<string, unknown> = {};
  for (const target of flagTargets) {
    const value = (opts as Record<string, unknown>)[target.key];
    if (value === undefined) continue;
    const parsed = checkValue(target.rule, value);
    if (!parsed.ok) throw badFlag(target.flag, parsed.expected, value);
    setIn(layer, target.path, parsed.value);
  }
  // A switch only ever turns its setting on; leaving it out keeps the lower layers' choice.
  for (const target of switchTargets) if ((opts as Record<string, unknown>)[target.key] === true) setIn(layer, target.path, true);
  return layer as SettingsLayer;
}

/**
 * Settings for a command: built-in defaults < --settings FILE (or AMSYNC_SETTINGS) <
 * AMSYNC_* environment < flags. Exit 64 for a bad flag, 65 for a bad file or variable.
 */
export async function resolveSettings(values: FlagValues, env: Env): Promise<Settings> {
  const flags = settingsFromFlags(values);
  const { settings } = values as SettingFlagValues;
  return loadSettings({ ...(settings !== undefined ? { settingsFile: settings } : {}), env, flags });
}
