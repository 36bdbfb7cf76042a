import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RunningTenants } from '../../src/emulator/index.js';
import { tenantsPerTest } from '../helpers/emulator-per-test.js';
import { fsFaults } from '../helpers/fs-faults.js';
import { runInProcess, type InProcessRun } from '../helpers/in-process.js';

// A read-only file system cannot be mounted here: EROFS is injected at node:fs for the folder the test marks.
vi.mock('node:fs/promises', async (actual) => (await import('../helpers/fs-faults.js')).faultyFsPromises(await actual()));
vi.mock('node:fs', async (actual) => (await import('../helpers/fs-faults.js')).faultyFs(await actual()));

/**
 * Issue 27 deliverable 6, for a fleet: every target's local paths (its state file, writer lock
 * and key, its tokensDir folder, its integrator key file) are checked before any request of any
 * target is sent. One line per bad path naming the target, the path, its setting (the targets
 * file's key for a key file) and the fix; exit 1; no stack; the emulator's log stays empty for
 * every tenant. Before, the first target ran (requests sent) while the bad one failed on its own,
 * or failed after its writes.
 */

const TOKEN = 'CANARY-fleet-local-outputs-8d21';
const KEY = 'CANARY-fleet-local-key-4b7e';

let emu: RunningTenants;
let dir: string;

tenantsPerTest(TOKEN, ['one', 'two'], 'amsync-fleet-local-', (e, d) => {
  emu = e;
  dir = d;
});
beforeEach(async () => {
  await writeFile(join(dir, 'access.yaml'), 'sshUsers:\n  - username: deploy\n    password: { env: DEPLOY_PASSWORD }\napikeys:\n  - name: ci\n');
  await writeFile(join(dir, 'targets.yaml'), targetsFile());
});
// Before the helper removes the folder (after-hooks run last-registered first).
afterEach(() => {
  fsFaults.clear();
});

function targetsFile(two = '    token: { env: FLEET_TOKEN }'): string {
  return `targets:
  - name: one
    url: ${emu.tenant('one').url}
    token: { env: FLEET_TOKEN }
  - name: two
    url: ${emu.tenant('two').url}
${two}
`;
}

function amsync(args: string[]): Promise<InProcessRun> {
  return runInProcess(args, { cwd: dir, env: { FLEET_TOKEN: TOKEN, DEPLOY_PASSWORD: 'pw-Local-1' } });
}

const requests = () => emu.tenantNames.flatMap((name) => emu.tenant(name).requests());
const errorLines = (run: InProcessRun) => run.stderr.split('\n').filter((l) => l.startsWith('error: '));

function expectRefusedBeforeAnyRequest(run: InProcessRun): void {
  expect(run.code).toBe(1);
  expect(run.stderr).not.toMatch(/unexpected failure|\n\s+at /);
  for (const text of [run.stdout, run.stderr]) for (const secret of [TOKEN, KEY]) expect(text).not.toContain(secret);
  expect(requests()).toEqual([]);
}

describe('a fleet checks every target’s local paths before any request of any target', () => {
  it('a state folder that is a file: one line per target, each naming it and its own state file', async () => {
    await writeFile(join(dir, 'a-file'), 'not a folder\n');
    const run = await amsync(['sync', '--targets', 'targets.yaml', '--auto-approve', '--state-file', 'a-file/state.json']);
    expectRefusedBeforeAnyRequest(run);
    const lines = errorLines(run);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^error: target one: cannot write the state file \S*a-file\/state\.one\.json \([^)]*--state-file[^)]*\): \S*a-file is a file, not a folder \((ENOTDIR|EEXIST)\); move that file away/);
    expect(lines[1]).toMatch(/^error: target two: cannot write the state file \S*a-file\/state\.two\.json /);
  });

  it('a target whose tokensDir is a file: one line naming that target, its folder and the setting; the other target sends nothing either', async () => {
    await mkdir(join(dir, 'tokens'));
    await writeFile(join(dir, 'tokens', 'two'), 'not a folder\n');
    const run = await amsync(['sync', '--targets', 'targets.yaml', '--auto-approve', '--state-file', 'state/state.json', '--tokens-dir', 'tokens']);
    expectRefusedBeforeAnyRequest(run);
    const lines = errorLines(run);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^error: target two: cannot write tokensDir \S*tokens\/two \([^)]*--tokens-dir, AMSYNC_TOKENS_DIR, tokensDir\): .*(ENOTDIR)\)?; .*nothing was sent$/);
  });

  for (const command of ['sync', 'plan'] as const) {
    it(`${command}: a target whose key file's folder is read-only: one line naming the target, the file and its integratorKey.file, not AMSYNC_REFRESH_TOKEN_FILE`, async () => {
      await mkdir(join(dir, 'keys'));
      await writeFile(join(dir, 'keys', 'two.key'), `${KEY}\n`);
      await writeFile(join(dir, 'targets.yaml'), targetsFile('    integratorKey: { file: keys/two.key }'));
      fsFaults.set(join(dir, 'keys'), 'EROFS');
      const args = command === 'sync' ? ['sync', '--auto-approve'] : ['plan'];
      const run = await amsync([...args, '--targets', 'targets.yaml', '--state-file', 'state/state.json']);
      expectRefusedBeforeAnyRequest(run);
      const lines = errorLines(run);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^error: target two: cannot write the integrator key file \S*keys\/two\.key \(integratorKey\.file of target two in targets\.yaml\): the file system is read-only \(EROFS\); point integratorKey\.file at a writable file system/);
      expect(run.stderr).not.toContain('AMSYNC_REFRESH_TOKEN_FILE');
    });
  }
});
