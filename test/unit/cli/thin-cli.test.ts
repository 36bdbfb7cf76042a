import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Command, Option } from 'commander';
import { Readable } from 'node:stream';
import { buildProgram } from '../../../src/cli/main.js';
import { settingOptions, type SettingFlagValues } from '../../../src/settings/index.js';
import { systemTimers } from '../../../src/time/timers.js';
import { CaptureStream } from '../../helpers/in-process.js';

const cliDir = join(import.meta.dirname, '../../../src/cli');

/** Lines of every file of src/cli/, as `wc -l` counts them. */
function cliLines(): number {
  return readdirSync(cliDir)
    .filter((name) => name.endsWith('.ts'))
    .reduce((sum, name) => sum + readFileSync(join(cliDir, name), 'utf8').split('\n').length - 1, 0);
}

/** Every option of every command that help shows, by command path and long flag (`ctl status --socket`). */
function allOptions(program: Command): Map<string, Option> {
  const out = new Map<string, Option>();
  const walk = (cmd: Command, path: string) => {
    for (const o of cmd.options) if (o.long !== undefined && !o.hidden) out.set(`${path} ${o.long}`, o);
    for (const sub of cmd.commands) walk(sub, `${path} ${sub.name()}`.trim());
  };
  walk(program, '');
  return out;
}

describe('cli/ stays the thin layer: parse, call one use case, render, map errors to exit codes', () => {
  it('holds at most 2,200 lines (logic belongs in app/, sync/, plan/, report/, settings/)', () => {
    expect(cliLines()).toBeLessThanOrEqual(2200);
  });

  it("registers each setting's flag from its row of the option table: the help names the variable and the default the settings use", async () => {
    const io = { stdout: new CaptureStream(false), stderr: new CaptureStream(false), stdin: Readable.from([]), env: {}, timers: systemTimers };
    const options = allOptions(await buildProgram(io, { setExitCode: () => undefined }));
    const checked = settingOptions.filter((o) => o.flag !== undefined && o.help !== undefined);
    expect(checked.length).toBeGreaterThan(20);
    for (const row of checked) {
      const registered = [...options].filter(([key]) => key.endsWith(` ${row.flag!}`));
      expect(registered.length, `${row.flag!} is registered by some command`).toBeGreaterThan(0);
      // `ctl`'s --socket and --state-file name the daemon's, in its own words.
      for (const [key, option] of registered.filter(([k]) => !k.startsWith('ctl '))) {
        if (row.env !== undefined) expect(option.description, key).toContain(row.env);
        if (row.default !== undefined && row.switch !== true) expect(option.description, key).toContain(`default ${row.helpDefault ?? String(row.default)}`);
      }
    }
  });

  it("types every setting's flag value: a new flag in the option table needs its key in SettingFlagValues", () => {
    const keys: Record<Exclude<keyof SettingFlagValues, 'settings' | 'token' | 'refreshToken'>, true> = {
      url: true, tokenFile: true, refreshTokenFile: true, rate: true, concurrency: true, pageSize: true, listDeadlineMs: true, maxResponseBytes: true, maxDeletes: true,
      lockTimeout: true, auditLog: true, tokensDir: true, kubernetesSecret: true, stateFile: true, logLevel: true, allowInsecureHttp: true, caFile: true, listen: true,
      schedule: true, mode: true, leaderElect: true, runDeadlineMs: true, approvals: true, socket: true,
    };
    const camel = (flag: string) => flag.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    expect(settingOptions.flatMap((o) => (o.flag === undefined ? [] : [camel(o.flag)])).sort()).toEqual(Object.keys(keys).sort());
  });
});
