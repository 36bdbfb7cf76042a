import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../../helpers/in-process.js';

const empty = mkdtempSync(join(tmpdir(), 'amsync-no-file-'));
afterAll(() => rmSync(empty, { recursive: true, force: true }));

describe('plan with no -f, no AMSYNC_FILE and no ./access.yaml says what to do', () => {
  it.each([[['plan', '--url', 'http://127.0.0.1:1']], [['sync', '--dry-run', '--url', 'http://127.0.0.1:1']], [['validate']]])('amsync %j: exit 65 naming -f, AMSYNC_FILE, amsync export -o access.yaml and the examples', async (args) => {
    const run = await runInProcess(args, { cwd: empty, env: { AMSYNC_TOKEN: 'unused' } });
    expect(run.code).toBe(65);
    for (const hint of ['cannot read access.yaml: no such file, and neither -f nor AMSYNC_FILE names another desired-state file', 'Name it with -f FILE (or AMSYNC_FILE=FILE)', '`amsync export -o access.yaml`', 'examples/access.yaml']) {
      expect(run.stderr).toContain(hint);
    }
  });

  it('a missing file given with -f or AMSYNC_FILE is still just missing', async () => {
    const given = await runInProcess(['validate', '-f', 'team.yaml'], { cwd: empty });
    expect(given.code).toBe(65);
    expect(given.stderr).toContain('cannot read team.yaml: no such file');
    const fromEnv = await runInProcess(['validate'], { cwd: empty, env: { AMSYNC_FILE: 'team.yaml' } });
    expect(fromEnv.stderr).toContain('cannot read team.yaml: no such file');
  });
});
