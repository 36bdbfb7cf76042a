import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflowCommand } from '../../src/report/index.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { runInProcess } from '../helpers/in-process.js';

const TOKEN = 'CANARY-bearer-annotations-1f0e';
let emu: RunningEmulator;
let dir: string;

beforeAll(async () => {
  emu = await startEmulator({ tokens: [TOKEN] });
  dir = await mkdtemp(join(tmpdir(), 'amsync-annotations-'));
});
afterAll(async () => {
  await emu.close();
  await rm(dir, { recursive: true, force: true });
});

const actions = { GITHUB_ACTIONS: 'true' };

describe('GitHub Actions annotations (GITHUB_ACTIONS=true)', () => {
  it('escapes as the Actions toolkit does: %, CR and LF in the message; also : and , in properties', () => {
    expect(workflowCommand('error', { file: 'a:b,c%.yaml', line: '3', col: '5' }, '50% off\r\nnext: line, more')).toBe('::error file=a%3Ab%2Cc%25.yaml,line=3,col=5::50%25 off%0D%0Anext: line, more');
    expect(workflowCommand('warning', {}, 'no place')).toBe('::warning::no place');
  });

  it('validate: an error at its file, line and column; nothing without GITHUB_ACTIONS', async () => {
    const run = await runInProcess(['validate', '-f', 'test/fixtures/desired/unknown-key.yaml'], { env: actions });
    expect(run.code).toBe(65);
    expect(run.stderr).toContain("::error file=test/fixtures/desired/unknown-key.yaml,line=4,col=5::unknown key 'levl' — did you mean 'level'? (sshUsers[0].levl)");
    expect(run.stdout).not.toContain('::');
    const local = await runInProcess(['validate', '-f', 'test/fixtures/desired/unknown-key.yaml']);
    expect(local.stderr).not.toContain('::error');
  });

  it('validate: warnings as ::warning', async () => {
    const run = await runInProcess(['validate', '-f', 'examples/access.yaml'], { env: actions });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('::warning file=examples/access.yaml,line=13,col=15::environment variable DEPLOY_PASSWORD is not set');
  });

  it('plan and sync: an invalid file, and a declared item the plan cannot decide on', async () => {
    await writeFile(join(dir, 'bad.yaml'), 'sshUsers:\n  - username: a\n    levl: n1\n');
    const env = { ...actions, AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN };
    const bad = await runInProcess(['plan', '-f', 'bad.yaml'], { cwd: dir, env });
    expect(bad.code).toBe(65);
    expect(bad.stderr).toContain('::error file=bad.yaml,line=3,col=5::unknown key');

    emu.seed({ apikeys: [{ name: 'ci' }, { name: 'ci' }] });
    await writeFile(join(dir, 'access.yaml'), 'apikeys:\n  - name: ci\n    roles: [1]\n');
    for (const command of [['plan', '--json'], ['sync']]) {
      const run = await runInProcess(command, { cwd: dir, env });
      expect(run.code, command.join(' ')).toBe(1);
      expect(run.stderr).toMatch(/^::error file=access\.yaml,line=2,col=\d+::apikey "ci": /m);
    }
    // The JSON document on stdout stays a JSON document.
    const json = await runInProcess(['plan', '--json'], { cwd: dir, env });
    expect(JSON.parse(json.stdout).problems).toHaveLength(1);
  });
});
