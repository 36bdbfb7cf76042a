import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningTenants } from '../../src/emulator/index.js';
import { resetTenants } from '../helpers/emulator-per-test.js';
import { runInProcess } from '../helpers/in-process.js';

// issue 29: --only / --exclude filter items, not targets: in a fleet they apply to each
// target's plan, and an address may name items of some targets only.

const TOKEN = 'CANARY-select-fleet-2b7d';
let emu: RunningTenants;
let dir: string;

beforeAll(async () => {
  emu = await startEmulator({ tokens: [TOKEN], tenants: ['east', 'west'] });
});
afterAll(async () => {
  await emu.close();
});
beforeEach(async () => {
  resetTenants(emu, { tokens: [TOKEN], readOnlyTokens: [] });
  dir = await mkdtemp(join(tmpdir(), 'amsync-select-fleet-'));
  await writeFile(join(dir, 'access.yaml'), 'apikeys:\n  - name: ci-build\n    roles: [1]\n  - name: billing\n    roles: [2]\nprune:\n  apikeys: true\n');
  await writeFile(
    join(dir, 'targets.yaml'),
    `targets:\n  - name: east\n    url: ${emu.tenant('east').url}\n    token: { env: FLEET_TOKEN }\n  - name: west\n    url: ${emu.tenant('west').url}\n    token: { env: FLEET_TOKEN }\n`,
  );
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const writesTo = (name: string) =>
  emu
    .tenant(name)
    .requests()
    .filter((r) => r.method !== 'GET')
    .map((r) => `${r.method} ${r.path}`);

describe('fleet: --only per target', () => {
  it('changes only the selected items on every target; a target where the address names nothing plans nothing for it', async () => {
    // Drift on both targets; ci-old only on east.
    emu.tenant('east').seed({ apikeys: [{ name: 'ci-build', roles: [3] }, { name: 'ci-old' }, { name: 'billing', roles: [3] }] });
    emu.tenant('west').seed({ apikeys: [{ name: 'ci-build', roles: [3] }, { name: 'billing', roles: [3] }] });
    emu.tenant('east').clearRequests();
    emu.tenant('west').clearRequests();
    const run = await runInProcess(['sync', '--targets', 'targets.yaml', '--only', 'apikey:ci-old', '--auto-approve'], { cwd: dir, env: { FLEET_TOKEN: TOKEN } });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(writesTo('east')).toEqual(['DELETE /api/3rdparty/apikeys/2']);
    expect(writesTo('west')).toEqual([]);
    expect(run.stdout).toContain('Partial plan (--only apikey:ci-old)');
    // Everything else stays drifted on both.
    for (const t of ['east', 'west']) expect(emu.tenant(t).state().apikeys.find((k) => k.name === 'billing')!.roles.map((r) => r.id)).toEqual([3]);
  });
});
