import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { flagTargets } from '../../../src/cli/shared-options.js';
import { buildProgram } from '../../../src/cli/main.js';
import { processIo } from '../../../src/cli/io.js';
import { defaultSettings, settingsEnvVars, settingsFileSchema } from '../../../src/settings/index.js';

/**
 * A setting is written in several places: the zod schema (which the settings file, the JSON
 * Schema and the layering go through), the built-in defaults, the AMSYNC_* table, the flags,
 * config/default.yaml and the README's table. One of them silently disagreeing once made a
 * setting do nothing (retry.retryAfterCapMs): every view must name the same settings.
 */
function leaves(schema: z.ZodType, prefix = ''): string[] {
  const inner = schema instanceof z.ZodOptional || schema instanceof z.ZodNullable ? (schema.unwrap() as z.ZodType) : schema;
  if (inner instanceof z.ZodObject) return Object.entries(inner.shape as Record<string, z.ZodType>).flatMap(([k, v]) => leaves(v, prefix ? `${prefix}.${k}` : k));
  return [prefix];
}

const schemaKeys = leaves(settingsFileSchema);
const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
const settingsSection = readme.slice(readme.indexOf('\n## Settings\n'), readme.indexOf('\n## ', readme.indexOf('\n## Settings\n') + 1));
const defaultYaml = readFileSync(new URL('../../../config/default.yaml', import.meta.url), 'utf8');

describe('every view of the settings names the same settings', () => {
  it('each AMSYNC_* variable sets a setting the schema has', () => {
    for (const v of settingsEnvVars) expect(schemaKeys, v.name).toContain(v.path.join('.'));
  });

  it('each flag sets a setting the schema has, and some command accepts it', () => {
    const program = buildProgram(processIo(), { setExitCode: () => undefined });
    const accepted = new Set(program.commands.flatMap((c) => c.options.map((o) => o.long)));
    for (const f of flagTargets) {
      expect(schemaKeys, f.flag).toContain(f.path.join('.'));
      expect(accepted.has(f.flag), `${f.flag} is not an option of any command`).toBe(true);
    }
  });

  it('each setting has a built-in default, or is one that is off until set', () => {
    const optional = new Set(['url', 'tokenFile', 'refreshTokenFile', 'tokensDir', 'rate', 'http.caFile', 'daemon.leaderElect', 'daemon.approvalsFile']);
    const value = (path: string) => path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], defaultSettings);
    for (const key of schemaKeys) if (!optional.has(key)) expect(value(key), key).not.toBeUndefined();
  });

  it('each setting is documented in config/default.yaml and in the README table', () => {
    for (const key of schemaKeys) {
      const last = key.split('.').at(-1)!;
      expect(defaultYaml, `${key} in config/default.yaml`).toMatch(new RegExp(`^\\s*${last}:`, 'm'));
      // A row of the table starts with the setting's full name (several may share a row).
      const rows = settingsSection.split('\n').filter((line) => line.startsWith('| `'));
      const named = rows.some((row) => row.split('|')[1]!.includes(`\`${key}\``));
      expect(named, `${key} in README's settings table`).toBe(true);
    }
  });
});
