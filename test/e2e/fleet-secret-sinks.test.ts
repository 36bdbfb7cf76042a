import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningTenants } from '../../src/emulator/index.js';
import { passwordMatches as checkPassword } from '../helpers/emulator-client.js';
import { resetTenants } from '../helpers/emulator-per-test.js';
import { forms } from '../helpers/encodings.js';
import { secretApiPerFile, type SecretBackend } from '../helpers/fake-secret-api.js';
import { runInProcess, type InProcessRun } from '../helpers/in-process.js';

// issue 30, item 5: a fleet's secrets go per target. With kubernetesSecret each target has its
// own Secret (NAME-<target>), with tokensDir its own folder (tokensDir/<target>/, passwords in
// tokensDir/<target>/passwords~/): the same user and apikey names on two services never share
// a place, and each target's Secret holds the password its own service received.

const TOKEN = 'CANARY-fleet-sinks-token-3e1d';
const accessFile = 'sshUsers:\n  - username: deploy\n    password: { generate: { length: 32 } }\napikeys:\n  - name: deploy\n';

let emu: RunningTenants;
let backend: SecretBackend;
let dir: string;

secretApiPerFile('amsync-fleet-sinks-', (b, d) => {
  backend = b;
  dir = d;
});
beforeAll(async () => {
  emu = await startEmulator({ tokens: [TOKEN], tenants: ['sp', 'rj'] });
});
afterAll(async () => {
  await emu.close();
});
beforeEach(async () => {
  resetTenants(emu, { tokens: [TOKEN], readOnlyTokens: [] });
  backend.secrets.clear();
  await rm(join(dir, 'state'), { recursive: true, force: true });
  await writeFile(join(dir, 'access.yaml'), accessFile);
  await writeFile(join(dir, 'targets.yaml'), `targets:\n  - name: sp\n    url: ${emu.tenant('sp').url}\n    token: { env: FLEET_TOKEN }\n  - name: rj\n    url: ${emu.tenant('rj').url}\n    token: { env: FLEET_TOKEN }\n`);
});

function amsync(args: string[]): Promise<InProcessRun> {
  return runInProcess(args, { cwd: dir, env: { FLEET_TOKEN: TOKEN, KUBECONFIG: join(dir, 'kubeconfig') } });
}

const passwordMatches = (tenant: string, username: string, password: string): Promise<boolean> => checkPassword(emu.tenant(tenant).url, username, password);

function expectNowhere(run: InProcessRun, secrets: readonly string[]): void {
  for (const form of forms(secrets)) {
    expect(run.stdout).not.toContain(form);
    expect(run.stderr).not.toContain(form);
  }
}

describe('a fleet writes each target\'s secrets to its own sink', () => {
  it('kubernetesSecret: one Secret per target, each holding the password and token its own service has', async () => {
    const run = await amsync(['sync', '--targets', 'targets.yaml', '--state-file', 'state/state.json', '--kubernetes-secret', 'amsync/amsync-tokens']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect([...backend.secrets.keys()].sort()).toEqual(['amsync-tokens-rj', 'amsync-tokens-sp']);
    const passwords: string[] = [];
    for (const tenant of ['sp', 'rj']) {
      const secret = `amsync-tokens-${tenant}`;
      const password = backend.value(secret, 'password__deploy')!;
      expect(await passwordMatches(tenant, 'deploy', password)).toBe(true);
      expect(backend.value(secret, 'deploy')).toBe(emu.tenant(tenant).state().apikeys[0]!.token);
      passwords.push(password);
    }
    expect(passwords[0]).not.toBe(passwords[1]);
    expect(await passwordMatches('rj', 'deploy', passwords[0]!)).toBe(false);
    expectNowhere(run, passwords);
  });

  it('tokensDir: a folder per target, its passwords in <target>/passwords~', async () => {
    const run = await amsync(['sync', '--targets', 'targets.yaml', '--state-file', 'state/state.json', '--tokens-dir', 'tokens']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    for (const tenant of ['sp', 'rj']) {
      const password = await readFile(join(dir, 'tokens', tenant, 'passwords~', 'deploy'), 'utf8');
      expect(await passwordMatches(tenant, 'deploy', password)).toBe(true);
      expect(await readFile(join(dir, 'tokens', tenant, 'deploy'), 'utf8')).toBe(emu.tenant(tenant).state().apikeys[0]!.token);
      expectNowhere(run, [password]);
    }
  });
});

describe('an item no target\'s sink could store under its name is refused before any request of any target', () => {
  const longUser = `u${'_'.repeat(150)}x`; // its Secret data key escapes each `_`: past 253 characters
  const longKey = `k${'é'.repeat(130)}`; // 261 bytes of UTF-8: past a file name's 255

  it('kubernetesSecret: exit 65, each target named, nothing sent to a service or to Kubernetes', async () => {
    await writeFile(join(dir, 'access.yaml'), `sshUsers:\n  - username: ${longUser}\n    password: { generate: { length: 32 } }\n`);
    const kubeBefore = backend.requests.length;
    const run = await amsync(['sync', '--targets', 'targets.yaml', '--state-file', 'state/state.json', '--kubernetes-secret', 'amsync/amsync-tokens']);
    expect(run.code, run.stdout + run.stderr).toBe(65);
    expect(run.stderr).toContain('nothing was sent to any target');
    expect(run.stderr).toContain('access.yaml:2:5: error: target sp: SSH user');
    expect(run.stderr).toContain('access.yaml:2:5: error: target rj: SSH user');
    expect(emu.tenant('sp').requests()).toEqual([]);
    expect(emu.tenant('rj').requests()).toEqual([]);
    expect(backend.requests.slice(kubeBefore)).toEqual([]);
  });

  it('tokensDir: exit 65 for a plan too, nothing sent', async () => {
    await writeFile(join(dir, 'access.yaml'), `apikeys:\n  - name: ${longKey}\n`);
    const run = await amsync(['plan', '--targets', 'targets.yaml', '--state-file', 'state/state.json', '--tokens-dir', 'tokens']);
    expect(run.code, run.stdout + run.stderr).toBe(65);
    expect(run.stderr).toMatch(/target sp: apikey "k/);
    expect(emu.tenant('sp').requests()).toEqual([]);
    expect(emu.tenant('rj').requests()).toEqual([]);
  });
});
