import { InvalidInputError } from '../errors.js';
import type { Diagnostic } from '../model/index.js';
import { decodeText, readBounded } from '../yaml/index.js';
import { settingsFromEnv } from './env-settings.js';
import { mergeSettings } from './merge-settings.js';
import { parseSettings } from './parse-settings.js';
import { defaultSettings } from './option-table.js';
import type { Settings } from './settings.js';
import type { SettingsLayer } from './settings-schema.js';

export interface SettingsSources {
  /** `--settings FILE`; falls back to AMSYNC_SETTINGS. */
  readonly settingsFile?: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** What the flags set, already checked (a bad flag is a UsageError before this). */
  readonly flags?: SettingsLayer;
}

/**
 * Layers defaults < settings file < AMSYNC_* environment < flags. A bad settings file or
 * environment value throws InvalidInputError (exit 65) with every problem found in both.
 */
export async function loadSettings(sources: SettingsSources): Promise<Settings> {
  const file = sources.settingsFile ?? (sources.env.AMSYNC_SETTINGS || undefined);
  const problems: Diagnostic[] = [];
  let fileLayer: SettingsLayer = {};
  if (file !== undefined) {
    const bytes = await readBounded(file, 'settings_unreadable');
    const decoded = decodeText(bytes, file);
    if (decoded.error) problems.push(decoded.error);
    else {
      const parsed = parseSettings(decoded.text, file);
      if (parsed.value) fileLayer = parsed.value;
      problems.push(...parsed.errors);
    }
  }
  const env = settingsFromEnv(sources.env);
  problems.push(...env.errors);
  if (problems.length > 0) {
    const fileBad = problems.some((d) => d.position !== undefined);
    const what = fileBad ? `settings file ${file ?? ''}`.trim() : 'AMSYNC_* environment';
    throw new InvalidInputError(`invalid settings: ${problems.length} problem${problems.length === 1 ? '' : 's'} in the ${what}; nothing was sent`, problems, fileBad ? 'settings_invalid' : 'env_invalid');
  }
  const layers = [fileLayer, env.layer, sources.flags ?? {}];
  const settings = mergeSettings(defaultSettings, layers, env.token, env.refreshToken);
  return layers.some((layer) => layer.logLevel !== undefined && layer.logLevel !== null) ? { ...settings, logLevelGiven: true } : settings;
}
