import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import * as z from 'zod';
import { flagTargets } from '../../../src/settings/index.js';
import { buildProgram } from '../../../src/cli/main.js';
import { processIo } from '../../../src/cli/io.js';
import { defaultSettings, settingName, settingOptions, settingsEnvVars, settingsFileSchema, type SettingOption } from '../../../src/settings/index.js';

/**
 * Each setting is declared once, in the option table (src/settings/option-table.ts). The zod
 * schema, the JSON Schema, the AMSYNC_* variables, the flags' targets and the defaults are
 * made from it; config/default.yaml, the commands' flags and README's settings table are
 * written by hand and checked here against it. One of them silently disagreeing once made a
 * setting do nothing (retry.retryAfterCapMs).
 */
function leaves(schema: z.ZodType, prefix = ''): string[] {
  const inner = schema instanceof z.ZodOptional || schema instanceof z.ZodNullable ? (schema.unwrap() as z.ZodType) : schema;
  if (inner instanceof z.ZodObject) return Object.entries(inner.shape as Record<string, z.ZodType>).flatMap(([k, v]) => leaves(v, prefix ? `${prefix}.${k}` : k));
  return [prefix];
}

const names = settingOptions.map(settingName);
const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
const settingsSection = readme.slice(readme.indexOf('\n## Settings\n'), readme.indexOf('\n## ', readme.indexOf('\n## Settings\n') + 1));
const defaultYaml = readFileSync(new URL('../../../config/default.yaml', import.meta.url), 'utf8');

/** The README row that names a setting: `| setting(s) | env | flag | default |`. */
function readmeRow(option: SettingOption): string[] | undefined {
  const rows = settingsSection.split('\n').filter((line) => line.startsWith('| `'));
  const row = rows.find((r) => r.split('|')[1]!.split(',').some((cell) => cell.trim() === `\`${settingName(option)}\``));
  return row?.split('|').slice(1, -1).map((cell) => cell.trim());
}

/** The comment block above a key in config/default.yaml (inside its group, if any). */
function yamlComment(option: SettingOption): string {
  const lines = defaultYaml.split('\n');
  const [head, key] = option.path;
  let at = lines.findIndex((line) => line.startsWith(`${head}:`));
  if (key !== undefined) at = lines.findIndex((line, i) => i > at && line.startsWith(`  ${key}:`));
  expect(at, `${settingName(option)} in config/default.yaml`).toBeGreaterThan(-1);
  const comment: string[] = [];
  for (let i = at - 1; i >= 0 && /^\s*#/.test(lines[i]!); i--) comment.unshift(lines[i]!.replace(/^\s*#\s?/, ''));
  return comment.join(' ');
}

const valueAt = (path: readonly string[], root: unknown): unknown => path.reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], root);

describe('every view of the settings agrees with the option table', () => {
  it('the settings-file schema (and so the JSON Schema) has exactly the settings of the table', () => {
    expect(leaves(settingsFileSchema()).sort()).toEqual([...names].sort());
  });

  it('the AMSYNC_* variables are the table\'s, and each is named once', () => {
    expect(settingsEnvVars.map((v) => v.name)).toEqual(settingOptions.flatMap((o) => (o.env ? [o.env] : [])));
    expect(new Set(settingsEnvVars.map((v) => v.name)).size).toBe(settingsEnvVars.length);
  });

  it('each flag of the table is an option of some command, under the key the flags are read by', async () => {
    const program = await buildProgram(processIo(), { setExitCode: () => undefined });
    const options = program.commands.flatMap((c) => c.options);
    for (const option of settingOptions.filter((o) => o.flag !== undefined)) {
      const registered = options.find((o) => o.long === option.flag);
      expect(registered, `${option.flag} is not an option of any command`).toBeDefined();
      const target = flagTargets.find((t) => t.flag === option.flag);
      if (option.switch === true) expect(registered!.required || registered!.optional, `${option.flag} is a switch`).toBe(false);
      else expect(target?.key, option.flag).toBe(registered!.attributeName());
    }
  });

  it('the defaults are the table\'s; a setting without one is off until set', () => {
    for (const option of settingOptions) expect(valueAt(option.path, defaultSettings), settingName(option)).toEqual(option.default);
  });

  it('config/default.yaml holds each default and names its variable and flag as the table does', () => {
    const parsed = parseYaml(defaultYaml) as unknown;
    for (const option of settingOptions) {
      expect(valueAt(option.path, parsed), `${settingName(option)} in config/default.yaml`).toEqual(option.default ?? null);
      const comment = yamlComment(option);
      const said = /Env (AMSYNC_[A-Z_]+)/.exec(comment)?.[1];
      expect(said, `the variable in the comment of ${settingName(option)}`).toBe(option.env);
      const flag = /flag (--[a-z-]+)/.exec(comment)?.[1];
      expect(flag, `the flag in the comment of ${settingName(option)}`).toBe(option.flag);
    }
  });

  it("README's settings table has each setting on a row with its variable, flag and default", () => {
    for (const option of settingOptions) {
      const row = readmeRow(option);
      expect(row, `${settingName(option)} in README's settings table`).toBeDefined();
      const [, env, flag, byDefault] = row!;
      const shared = row![0]!.split(',').length > 1; // `retry.baseDelayMs`, `retry.maxDelayMs` share a row with no env or flag
      expect(env, `${settingName(option)}: env column`).toBe(option.env === undefined ? '' : `\`${option.env}\``);
      expect(flag, `${settingName(option)}: flag column`).toBe(option.flag === undefined ? '' : `\`${option.flag}\``);
      const shown = typeof option.default === 'string' ? `\`${option.default}\`` : String(option.default);
      if (option.default === undefined) expect(byDefault, settingName(option)).toMatch(/^none/);
      else if (shared) expect(byDefault!.split(/[,(:]/).map((s) => s.trim()), settingName(option)).toContain(shown);
      else expect(byDefault!.startsWith(shown), `${settingName(option)}: default column '${byDefault}' starts with ${shown}`).toBe(true);
    }
  });
});
