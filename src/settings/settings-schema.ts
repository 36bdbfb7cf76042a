import * as z from 'zod';
import { settingGroups, settingOptions, type SettingOption } from './option-table.js';
import type { Settings } from './settings.js';

/** A layer sets any key, or unsets an optional one with `null`. */
type LayerOf<T> = {
  readonly [K in keyof T]?: (T[K] extends readonly unknown[] ? T[K] : T[K] extends object ? LayerOf<T[K]> : Exclude<T[K], undefined>) | (undefined extends T[K] ? null : never);
};

/** One layer of settings: what a file, the environment or the flags set. null unsets. */
export type SettingsLayer = LayerOf<Omit<Settings, 'token' | 'refreshToken' | 'logLevelGiven'>>;

/** "… Env AMSYNC_URL, flag --url.": where else the setting can be given, as config/default.yaml says it. */
export function whereSet(option: SettingOption): string {
  const where = [option.env === undefined ? undefined : `Env ${option.env}`, option.flag === undefined ? undefined : `flag ${option.flag}`].filter((w) => w !== undefined);
  return where.length > 0 ? `${where.join(', ')}.` : '';
}

const described = (option: SettingOption): string => `${option.description} ${whereSet(option)}`.trim();

function fieldSchema(option: SettingOption): z.ZodType {
  // A setting without a default is off until set, and `null` turns it off again.
  const schema = option.default === undefined ? option.rule.schema.nullable() : option.rule.schema;
  return schema.optional().meta({ description: described(option) });
}

function buildShape(): Record<string, z.ZodType> {
  const shape: Record<string, z.ZodType> = {};
  const groups: Record<string, Record<string, z.ZodType>> = {};
  for (const option of settingOptions) {
    const [head, key] = option.path;
    if (key === undefined) {
      shape[head] = fieldSchema(option);
      continue;
    }
    if (groups[head] === undefined) {
      groups[head] = {};
      shape[head] = z.strictObject(groups[head]); // placeholder keeps the table's order
    }
    groups[head][key] = fieldSchema(option);
  }
  for (const group of settingGroups) shape[group] = z.strictObject(groups[group] ?? {}).optional();
  return shape;
}

let fileSchema: z.ZodType<SettingsLayer> | undefined;

/**
 * A `--settings FILE` (and config/default.yaml): every key optional, unknown keys refused.
 * `null` unsets an optional value (`rate: null`: no ceiling). There is deliberately no
 * `token` key: a token never sits in a file that may be committed. Made from the option
 * table, so it cannot name a setting the rest of amsync does not know. Built when first
 * asked for: its ~100 schemas are a cost at every start, and most runs read no settings file.
 */
export function settingsFileSchema(): z.ZodType<SettingsLayer> {
  fileSchema ??= z
    .strictObject(buildShape())
    .meta({ title: 'amsync settings', description: 'Runtime settings: built-in defaults < this file < AMSYNC_* environment < flags.' }) as unknown as z.ZodType<SettingsLayer>;
  return fileSchema;
}
