import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { LeaseBackend, startLeaseApi } from '../helpers/fake-lease-api.js';
import { startDaemonInProcess, type InProcessDaemon } from '../helpers/in-process.js';

/**
 * Two replicas in one process (in-process daemons), each with its own identity (POD_NAME),
 * state file and health port, sharing one Lease on a fake API server. The Kubernetes client
 * finds its kubeconfig as kubectl does, through the process's KUBECONFIG: set here for both.
 */

const TOKEN = 'leader-election-token';
let emu: RunningEmulator;
let api: Awaited<ReturnType<typeof startLeaseApi>>;
let dir: string;
const backend = new LeaseBackend();
const daemons: InProcessDaemon[] = [];
const kubeconfigBefore = process.env.KUBECONFIG;

beforeAll(async () => {
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
  process.env.KUBECONFIG = join(dir, 'kubeconfig');
});
afterAll(async () => {
  for (const d of daemons) await d.stop();
  if (kubeconfigBefore === undefined) delete process.env.KUBECONFIG;
  else process.env.KUBECONFIG = kubeconfigBefore;
  await api.close();
  await emu.close();
  // A daemon stopped with a second signal exits at once; in-process, a run it left may still
  // write its state file for a moment (a process would have died): retry ENOTEMPTY.
  await rm(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 50 });
});

/** The value of `amsync_leader` on a replica's /metrics. */
const leaderGauge = async (d: InProcessDaemon) => Number(/^amsync_leader (\d+)$/m.exec((await d.get('/metrics')).text)?.[1]);

describe('two daemon replicas with --leader-elect: one writes, the other observes', () => {
  it('only the Lease holder applies; the other reports amsync_leader 0 and plans only', async () => {
    const start = (pod: string, stateDir: string) =>
      startDaemonInProcess(
        ['-f', join(dir, 'access.yaml'), '--url', emu.url, '--listen', '127.0.0.1:0', '--leader-elect', 'lease:amsync/amsync-leader', '--log-level', 'debug', '--state-file', join(dir, stateDir, 'state.json')],
        { cwd: dir, env: { AMSYNC_TOKEN: TOKEN, KUBECONFIG: join(dir, 'kubeconfig'), POD_NAME: pod } },
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
