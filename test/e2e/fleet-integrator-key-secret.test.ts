import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningTenants } from '../../src/emulator/index.js';
import { forms } from '../helpers/encodings.js';
import { secretApiPerFile, type SecretBackend } from '../helpers/fake-secret-api.js';
import { runInProcess, type InProcessRun } from '../helpers/in-process.js';

// issue 30, items 4 and 5: a fleet target's integrator key in a Kubernetes Secret of its own
// (`integratorKey: { secret: NAMESPACE/NAME[/KEY] }` in the targets file), read before each
// exchange and the rotated key written back there, so the fleet example needs no copying init
// container either. Each tenant of the emulator rotates its key at every exchange with no grace:
// only a key written back lets the next run in.

const KEY = 'fleet-integrator-key-canary-5b0e';
const PASSWORD = 'pw-canary-"\\-ü-fleet-7c1';
let emu: RunningTenants;
let backend: SecretBackend;
let dir: string;
const b64 = (text: string) => Buffer.from(text).toString('base64');
const keyIn = (secret: string) => backend.value(secret, 'key')!.trim();

secretApiPerFile('amsync-fleet-key-secret-', (b, d) => {
  backend = b;
  dir = d;
});
beforeAll(async () => {
  emu = await startEmulator({ refreshTokens: [KEY], rotateRefreshTokens: true, refreshTokenGraceSeconds: 0, tenants: ['sp', 'rj'] });
  for (const name of ['sp', 'rj']) backend.handle('POST', '/api/v1/namespaces/amsync/secrets', JSON.stringify({ metadata: { name: `ik-${name}` }, data: { key: b64(`${KEY}\n`) } }));
  await writeFile(join(dir, 'access.yaml'), 'sshUsers:\n  - username: deploy\n    password: { env: DEPLOY_PASSWORD }\n');
  const target = (name: string) => `  - name: ${name}\n    url: ${emu.tenant(name).url}\n    integratorKey: { secret: amsync/ik-${name}/key }\n`;
  await writeFile(join(dir, 'targets.yaml'), `targets:\n${target('sp')}${target('rj')}`);
});
afterAll(async () => {
  await emu.close();
});

function amsync(args: string[]): Promise<InProcessRun> {
  return runInProcess(args, { cwd: dir, env: { KUBECONFIG: join(dir, 'kubeconfig'), DEPLOY_PASSWORD: PASSWORD } });
}

describe("a fleet target's integrator key in its own Kubernetes Secret", () => {
  it('validate accepts the reference without a cluster; sync writes each rotated key back to its own Secret; the next run logs in with them', async () => {
    const validate = await amsync(['validate', '--targets', 'targets.yaml', '-f', 'access.yaml']);
    expect(validate.code, validate.stderr).toBe(0);

    const first = await amsync(['sync', '--targets', 'targets.yaml', '-f', 'access.yaml', '--state-file', 'state/state.json']);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    for (const name of ['sp', 'rj']) expect(emu.tenant(name).state().sshUsers.map((u) => u.username)).toEqual(['deploy']);
    const rotated = { sp: keyIn('ik-sp'), rj: keyIn('ik-rj') };
    expect(rotated.sp).not.toBe(KEY);
    expect(rotated.rj).not.toBe(KEY);
    expect(rotated.sp).not.toBe(rotated.rj);

    // The keys read at start no longer work (no grace): only the ones written back let this run in.
    const second = await amsync(['plan', '--targets', 'targets.yaml', '-f', 'access.yaml', '--state-file', 'state/state.json', '--detailed-exitcode']);
    expect(second.code, second.stdout + second.stderr).toBe(0);
    for (const name of ['sp', 'rj']) expect(emu.tenant(name).oauth()).toMatchObject({ exchanges: 2, rejected: 0 });
    for (const run of [validate, first, second]) {
      for (const form of forms([KEY, PASSWORD, rotated.sp, rotated.rj, keyIn('ik-sp'), keyIn('ik-rj')])) expect(run.stdout + run.stderr).not.toContain(form);
    }
  });

  it('a reference that is not NAMESPACE/NAME[/KEY] is an error at its line and column (exit 65), nothing sent', async () => {
    await writeFile(join(dir, 'bad-targets.yaml'), `targets:\n  - name: sp\n    url: ${emu.tenant('sp').url}\n    integratorKey: { secret: "not a ref" }\n`);
    const before = emu.tenant('sp').requests().length;
    const run = await amsync(['plan', '--targets', 'bad-targets.yaml', '-f', 'access.yaml']);
    expect(run.code).toBe(65);
    expect(run.stderr).toMatch(/bad-targets\.yaml:4:\d+/);
    expect(emu.tenant('sp').requests().length).toBe(before);
  });
});
