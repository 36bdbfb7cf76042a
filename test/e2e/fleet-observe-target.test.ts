import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningTenants } from '../../src/emulator/index.js';
import { resetTenants } from '../helpers/emulator-per-test.js';
import { waitFor } from '../helpers/daemon-deferred.js';
import { runInProcess, startDaemonInProcess } from '../helpers/in-process.js';

/**
 * Issue 29 item 5, "per target in the targets file": a fleet of two services where the one
 * observed as a whole (`mode: observe` on its entry) has drifted. Its drift is reported (plan,
 * --json, the daemon's metrics and log) and its request log shows no write; the other target
 * is corrected as usual.
 */

const TOKEN = 'CANARY-fleet-observe-91c3';
let emu: RunningTenants;
let dir: string;

beforeAll(async () => {
  emu = await startEmulator({ tokens: [TOKEN], tenants: ['watched', 'managed'] });
});
afterAll(async () => {
  await emu.close();
});
beforeEach(async () => {
  resetTenants(emu, { tokens: [TOKEN], readOnlyTokens: [] });
  dir = await mkdtemp(join(tmpdir(), 'amsync-fleet-observe-'));
  await writeFile(join(dir, 'access.yaml'), 'apikeys:\n  - name: billing\n    roles: [2]\nprune:\n  apikeys: true\n');
  await writeFile(
    join(dir, 'targets.yaml'),
    `targets:\n  - name: watched\n    url: ${emu.tenant('watched').url}\n    token: { env: FLEET_TOKEN }\n    mode: observe\n  - name: managed\n    url: ${emu.tenant('managed').url}\n    token: { env: FLEET_TOKEN }\n`,
  );
  for (const t of ['watched', 'managed']) {
    emu.tenant(t).seed({ apikeys: [{ name: 'billing', roles: [3] }, { name: 'stray' }] });
    emu.tenant(t).clearRequests();
  }
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
const env = { FLEET_TOKEN: TOKEN, AMSYNC_INITIAL_RATE: '1000' };

describe('a target observed through the targets file (mode: observe)', () => {
  it('fleet sync: its drift (an update, a prune) is reported and nothing is written to it; the other target is corrected', async () => {
    const run = await runInProcess(['sync', '--targets', 'targets.yaml', '--auto-approve'], { cwd: dir, env });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const [watched, managed] = run.stdout.split('== target managed');
    expect(watched).toContain('Observed only (mode: observe): 2 items have drifted; reported, not written:');
    expect(watched).toContain('# apikey "billing" (id 1) drifted: not updated (observe only)');
    expect(watched).toContain('~ roles = [3] -> [2]');
    expect(watched).toContain('# apikey "stray" (id 2) not deleted (observe only) (prune: not declared)');
    expect(watched).toContain('Observed: 2 items drifted (observe only: not corrected).');
    expect(managed).toContain('✓ updated apikey "billing"');
    expect(managed).toContain('✓ deleted apikey "stray"');
    // The request logs: nothing written to the observed target; the other one corrected.
    expect(writesTo('watched')).toEqual([]);
    expect(writesTo('managed')).toEqual(['PUT /api/3rdparty/apikeys/1', 'DELETE /api/3rdparty/apikeys/2']);
    expect(emu.tenant('watched').state().apikeys.map((k) => [k.name, k.roles.map((r) => r.id)])).toEqual([
      ['billing', [3]],
      ['stray', []],
    ]);
    expect(emu.tenant('managed').state().apikeys.map((k) => [k.name, k.roles.map((r) => r.id)])).toEqual([['billing', [2]]]);

    // --json carries the observed drift of that target, and no change for it.
    const plan = await runInProcess(['plan', '--targets', 'targets.yaml', '--json'], { cwd: dir, env });
    const json = JSON.parse(plan.stdout) as { targets: { name: string; changes: unknown[]; observed?: { action: string; key: string }[] }[] };
    const observed = json.targets.find((t) => t.name === 'watched')!;
    expect(observed.changes).toEqual([]);
    expect(observed.observed!.map((c) => [c.action, c.key])).toEqual([
      ['update', 'billing'],
      ['delete', 'stray'],
    ]);
    expect(writesTo('watched')).toEqual([]);
    expect(run.stdout + run.stderr + plan.stdout + plan.stderr).not.toContain(TOKEN);
  });

  it('fleet daemon: the observed target reports its drift (metrics, log) and is never written; the other is corrected', async () => {
    const d = await startDaemonInProcess(['--targets', 'targets.yaml', '--listen', '127.0.0.1:0', '--schedule', '0 0 1 1 *', '--log-level', 'debug', '--state-file', join(dir, 'state.json')], { cwd: dir, env });
    try {
      await waitFor(async () => {
        const m = await d.get('/metrics');
        return /amsync_target_sync_runs_total\{target="watched",outcome="success"\} 1/.test(m.text) && /amsync_target_sync_runs_total\{target="managed",outcome="success"\} 1/.test(m.text) ? m.text : undefined;
      }, 'a run of both targets');
      const metrics = (await d.get('/metrics')).text;
      expect(metrics).toContain('amsync_target_drifted_items{target="watched"} 2');
      expect(metrics).toContain('amsync_target_changes_total{target="managed",outcome="applied"} 2');
      // The observed target's run planned its drift and applied nothing; the other's applied two changes.
      expect(d.logs.filter((l) => l.msg === 'change applied').map((l) => l.target)).toEqual(['managed', 'managed']);
      expect(writesTo('watched')).toEqual([]);
      expect(writesTo('managed')).toEqual(['PUT /api/3rdparty/apikeys/1', 'DELETE /api/3rdparty/apikeys/2']);
    } finally {
      await d.stop();
    }
  });
});
