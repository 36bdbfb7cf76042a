import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { assertBuilt } from '../helpers/cli.js';
import { startDaemonProcess, type DaemonProcess } from '../helpers/daemon-process.js';
import { LeaseBackend, startLeaseApi } from '../helpers/fake-lease-api.js';

const TOKEN = 'leader-election-token';
let emu: RunningEmulator;
let api: Awaited<ReturnType<typeof startLeaseApi>>;
let dir: string;
const backend = new LeaseBackend();
const daemons: DaemonProcess[] = [];

beforeAll(async () => {
  assertBuilt();
  emu = await startEmulator({ tokens: [TOKEN] });
  api = await startLeaseApi(backend, 'amsync', 'amsync-leader');
  dir = await mkdtemp(join(tmpdir(), 'amsync-leader-'));
  await writeFile(join(dir, 'access.yaml'), 'apikeys:\n  - name: ci\n    roles: [1]\n');
  // A kubeconfig as kubectl reads it, pointing at the fake API server.
  await writeFile(
    join(dir, 'kubeconfig'),
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{name: fake, cluster: {server: "' + api.url + '", insecure-skip-tls-verify: true}}]',
      'users: [{name: fake, user: {token: fake}}]',
      'contexts: [{name: fake, context: {cluster: fake, user: fake}}]',
      'current-context: fake',
      '',
    ].join('\n'),
  );
});
afterAll(async () => {
  for (const d of daemons) await d.kill();
  await api.close();
  await emu.close();
  await rm(dir, { recursive: true, force: true });
});

/** The value of `amsync_leader` on a replica's /metrics. */
const leaderGauge = async (d: DaemonProcess) => Number(/^amsync_leader (\d+)$/m.exec((await d.get('/metrics')).text)?.[1]);

describe('two daemon replicas with --leader-elect: one writes, the other observes', () => {
  it('only the Lease holder applies; the other reports amsync_leader 0 and plans only', async () => {
    const start = (pod: string, stateDir: string) =>
      startDaemonProcess(
        ['-f', join(dir, 'access.yaml'), '--url', emu.url, '--listen', '127.0.0.1:0', '--leader-elect', 'lease:amsync/amsync-leader', '--state-file', join(dir, stateDir, 'state.json')],
        { AMSYNC_TOKEN: TOKEN, KUBECONFIG: join(dir, 'kubeconfig'), POD_NAME: pod },
        dir,
      );
    const a = await start('pod-a', 'a');
    daemons.push(a);
    await a.waitForLog((l) => String(l.msg).startsWith('leading:'), 'pod-a to lead');
    const b = await start('pod-b', 'b');
    daemons.push(b);
    const observed = await b.waitForLog((l) => l.msg === 'sync finished', 'pod-b to finish its first run');
    const applied = await a.waitForLog((l) => l.msg === 'sync finished', 'pod-a to finish its first run');
    expect(applied).toMatchObject({ create: 1 });
    expect(b.logs.find((l) => l.msg === 'sync started')).toMatchObject({ dryRun: true });
    expect(observed).not.toMatchObject({ create: 1 });
    expect(await leaderGauge(a)).toBe(1);
    expect(await leaderGauge(b)).toBe(0);
    expect(backend.lease?.holderIdentity).toBe('pod-a');
    expect(new Set(backend.history.map((h) => h.holder))).toEqual(new Set(['pod-a']));
    // The one declared key exists once: the observer wrote nothing.
    expect(emu.state().apikeys.filter((k) => k.name === 'ci')).toHaveLength(1);
  });
});
