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

/** Every command by the words that name it: `plan`, `ctl`, `ctl status`. */
function commands(cmd: Command, words: readonly string[] = []): { words: string[]; cmd: Command }[] {
  return cmd.commands.filter((c) => c.name() !== 'help').flatMap((c) => [{ words: [...words, c.name()], cmd: c }, ...commands(c, [...words, c.name()])]);
}

const all = commands(await buildProgram(io(), { setExitCode: () => undefined }));

describe('every command\'s help has one style', () => {
  it.each([80, 100])('at %i columns, no line of any command\'s help is wider than the terminal (commander wraps it)', async (columns) => {
    for (const { words } of all) {
      const help = await runInProcess([...words, '--help'], { columns });
      expect(help.code).toBe(0);
      const wide = help.stdout.split('\n').filter((line) => line.length > columns);
      expect({ command: words.join(' '), wide }).toEqual({ command: words.join(' '), wide: [] });
    }
  });

  it.each(all.map(({ words, cmd }) => [words.join(' '), cmd] as const))('amsync %s: a lower-case description without a full stop, upper-case placeholders, defaults in the text', (_name, cmd) => {
    expect(cmd.description()).toMatch(/^[a-z`]/);
    expect(cmd.description()).not.toMatch(/\.$/);
    for (const option of cmd.options.filter((o) => !o.hidden)) {
      // `<FILE>`, `<HOST:PORT>`, `<NAMESPACE/NAME>`: a placeholder is upper case, as in the other commands.
      for (const placeholder of option.flags.match(/<[^>]+>/g) ?? []) expect({ flags: option.flags, placeholder }).toEqual({ flags: option.flags, placeholder: placeholder.toUpperCase() });
      // The defaults are written in the description, `(…; default 25)`, never commander's `(default: "…")`.
      expect({ flags: option.flags, defaultValue: option.defaultValue as unknown }).toEqual({ flags: option.flags, defaultValue: undefined });
    }
  });
});
