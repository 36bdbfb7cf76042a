import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { root } from '../../helpers/paths.js';
import { runInProcess } from '../../helpers/in-process.js';

describe('amsync schema', () => {
  it.each([
    [[], 'config/access.schema.json'],
    [['--settings'], 'config/settings.schema.json'],
    [['--targets'], 'config/targets.schema.json'],
  ])('amsync schema %j prints %s, byte for byte', async (flags, file) => {
    const run = await runInProcess(['schema', ...flags]);
    expect(run).toEqual({ code: 0, stdout: readFileSync(`${root}/${file}`, 'utf8'), stderr: '' });
  });

  it('--settings with --targets is a usage error (64): one schema at a time', async () => {
    const run = await runInProcess(['schema', '--settings', '--targets']);
    expect(run.code).toBe(64);
    expect(run.stderr).toBe('error: --settings and --targets each print one schema: give one of them\n');
    expect(run.stdout).toBe('');
  });
});
