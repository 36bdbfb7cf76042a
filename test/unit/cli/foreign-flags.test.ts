import { Readable } from 'node:stream';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import type { CliIo } from '../../../src/cli/io.js';
import { buildProgram } from '../../../src/cli/main.js';
import { systemTimers } from '../../../src/time/timers.js';
import { CaptureStream, runInProcess } from '../../helpers/in-process.js';

function io(): CliIo {
  return { stdout: new CaptureStream(false), stderr: new CaptureStream(false), stdin: Readable.from([]), env: {}, timers: systemTimers };
}

/** Every command that runs (`ctl status`, not `ctl`), by the words that name it. */
function leaves(cmd: Command, words: readonly string[] = []): { words: string[]; cmd: Command }[] {
  const own = cmd.commands.filter((c) => c.name() !== 'help');
  if (own.length === 0) return [{ words: [...words], cmd }];
  return own.flatMap((c) => leaves(c, [...words, c.name()]));
}

const longFlags = (cmd: Command, visibleOnly: boolean) => cmd.options.filter((o) => !visibleOnly || !o.hidden).flatMap((o) => (o.long === undefined ? [] : [o.long]));

describe('a flag of another command is explained, not a bare unknown option', () => {
  it.each([
    [['plan', '--auto-approve'], '`--auto-approve` is a flag of `amsync sync`: apply without asking for approval at a terminal', '`amsync plan` does not take it'],
    [['validate', '--url', 'http://127.0.0.1:1'], '`--url` is a flag of `amsync plan`, `amsync sync`, `amsync apply`, `amsync export` and `amsync daemon`: base URL of the service', '`amsync validate` does not take it'],
    [['daemon', '--dry-run'], '`--dry-run` is a flag of `amsync sync`: show the plan and change nothing', '`amsync daemon` does not take it'],
    [['daemon', '--schema', 'x'], "unknown option '--schema': `--schema` is a flag of `amsync export`", '`amsync daemon` does not take it'],
    [['ctl', 'status', '--prune'], '`--prune` is a flag of `amsync plan`, `amsync sync` and `amsync daemon`', '`amsync ctl status` does not take it'],
    [['validate', '--dry-run'], '`--dry-run` is a flag of `amsync sync`', '`amsync validate` does not take it'],
    [['--dry-run'], '`--dry-run` is a flag of `amsync sync`', '`amsync` itself does not take it: give the command first'],
    [['plan', '--auto-approve=yes'], '`--auto-approve` is a flag of `amsync sync`', '`amsync plan --help` lists the flags it takes'],
  ])('amsync %j: exit 64, %s', async (args, explanation, rest) => {
    const run = await runInProcess(args);
    expect(run.code).toBe(64);
    expect(run.stderr).toContain(explanation);
    expect(run.stderr).toContain(rest);
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(run.stdout).toBe('');
  });

  it('with --json the error document carries the explanation', async () => {
    const run = await runInProcess(['plan', '--json', '--auto-approve']);
    expect(run.code).toBe(64);
    const doc = JSON.parse(run.stdout) as { error: { code: string; message: string } };
    expect(doc.error.code).toBe('usage');
    expect(doc.error.message).toContain('`--auto-approve` is a flag of `amsync sync`');
  });

  it('a flag no command has keeps commander\'s message and its suggestion', async () => {
    expect((await runInProcess(['plan', '--bogus'])).stderr).toBe("error: unknown option '--bogus'\n");
    const typo = await runInProcess(['sync', '--auto-aprove']);
    expect(typo.code).toBe(64);
    expect(typo.stderr).toBe("error: unknown option '--auto-aprove'\n(Did you mean --auto-approve?)\n");
  });

  it('for every command, every flag another command has and it lacks is explained (from the command tree)', async () => {
    const program = await buildProgram(io(), { setExitCode: () => undefined });
    const commands = leaves(program);
    expect(commands.length).toBeGreaterThan(10);
    let checked = 0;
    for (const { words, cmd } of commands) {
      const own = new Set(longFlags(cmd, false));
      const foreign = new Set(commands.filter((other) => other.cmd !== cmd).flatMap((other) => longFlags(other.cmd, true)));
      for (const flag of [...foreign].filter((f) => !own.has(f))) {
        const run = await runInProcess([...words, flag]);
        expect({ args: [...words, flag], code: run.code }).toEqual({ args: [...words, flag], code: 64 });
        expect(run.stderr).toContain(`\`${flag}\` is a flag of \`amsync `);
        expect(run.stderr).toContain(`\`amsync ${words.join(' ')}\` does not take it`);
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(100);
  });
});
