import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServiceContext, type ServiceContext } from '../../src/cli/service-context.js';
import { type RunningDaemon } from '../../src/daemon/index.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import type { AuditControlEntry } from '../../src/app/index.js';
import type { NotifyEvent } from '../../src/model/index.js';
import { createMetrics, type AmsyncMetrics } from '../../src/obs/metrics.js';
import type { SyncWindowSetting } from '../../src/settings/index.js';
import { FakeWatcher, logSink } from '../helpers/daemon-fakes.js';
import { parseExposition } from '../helpers/daemon-prom-parse.js';
import { runInProcess } from '../helpers/in-process.js';
import { VirtualTime } from '../helpers/virtual-time.js';
import { startInProcessDaemon } from '../helpers/in-process-daemon.js';

/**
 * Issue 29 item 7: `amsync ctl` over the daemon's control socket (suspend, resume, sync now)
 * and the sync windows. The daemon runs in process against the emulator with a virtual clock
 * (2025-01-01T00:00Z, a Wednesday, at its start) and hand-driven triggers; `amsync ctl` is the
 * real command, run in process. What amsync says is compared with the emulator's request log.
 */

const TOKEN = 'CANARY-bearer-daemon-ctl-7d1e';
const PASSWORD = 'CANARY-password-daemon-ctl-40b2';

let dir: string;
let emu: RunningEmulator;
let context: ServiceContext | undefined;
let daemon: RunningDaemon | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-ctl-'));
  emu = await startEmulator({ tokens: [TOKEN] });
});

afterEach(async () => {
  await daemon?.stop();
  context?.close();
  await emu.close();
  daemon = undefined;
  context = undefined;
  await rm(dir, { recursive: true, force: true });
});

const oneUser = 'sshUsers:\n  - username: deploy\n    password: { env: DEPLOY_PASSWORD }\n';
const withKey = `${oneUser}apikeys:\n  - name: ci-bot\n`;

async function start(windows: SyncWindowSetting[] = []) {
  const file = join(dir, 'access.yaml');
  await writeFile(file, oneUser);
  const sink = logSink('debug'); // the per-run detail (drift named, writes held) is at debug
  context = await createServiceContext(
    { file: [file], url: emu.url, stateFile: join(dir, 'state.json') },
    { env: { AMSYNC_TOKEN: TOKEN, DEPLOY_PASSWORD: PASSWORD, AMSYNC_INITIAL_RATE: '1000' }, stderr: process.stderr },
    { logger: sink.logger },
  );
  const ctx = context;
  const time = new VirtualTime();
  const watcher = new FakeWatcher();
  const metrics = createMetrics({ version: 'test' });
  const events: NotifyEvent[] = [];
  const audited: AuditControlEntry[] = [];
  const socket = join(dir, 'ctl.sock');
  daemon = await startInProcessDaemon(ctx, { notify: (event) => events.push(event), audit: (entry) => audited.push(entry), logger: sink.logger, metrics, options: { file, watch: [file], socket, windows }, timers: time, watcher: watcher.factory });
  const d = daemon;
  /** The desired file now declares an apikey the service lacks: drift, and a run to correct it. */
  const addKey = async () => {
    await writeFile(file, withKey);
    watcher.change([file]);
    await d.idle();
  };
  return { d, socket, time, metrics, events, sink, addKey, audited };
}

const writes = () => emu.requests().filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.item?.name ?? r.path}`);
const gauge = async (metrics: AmsyncMetrics, name: string) => parseExposition((await metrics.render()).body).value(name);
const ctl = (args: string[]) => runInProcess(['ctl', ...args], { env: {} });

describe('amsync ctl suspend and resume', () => {
  it('suspended, the daemon plans and reports drift and writes nothing; resumed, it corrects it at once', async () => {
    const { d, socket, metrics, events, sink, addKey } = await start();
    expect(writes()).toEqual(['POST deploy']);

    const suspended = await ctl(['suspend', '--socket', socket, '--reason', 'change freeze INC-42']);
    expect(suspended).toMatchObject({ code: 0, stderr: '' });
    expect(suspended.stdout).toBe('suspended: change freeze INC-42 since 2025-01-01T00:00:00.000Z\n');
    expect(await gauge(metrics, 'amsync_suspended')).toBe(1);
    const readyz = await fetch(`${d.url}/readyz`);
    expect(readyz.status).toBe(200);
    expect(await readyz.text()).toBe('ready: ok (suspended: change freeze INC-42 since 2025-01-01T00:00:00.000Z)\n');
    expect(events.filter((e) => e.event === 'suspension_changed').map((e) => e.message)).toEqual([expect.stringMatching(/^suspended: change freeze INC-42 since 2025-01-01T00:00:00\.000Z \(by uid \d+\): the daemon observes only until resumed$/)]);

    // Drift while suspended: planned and reported (drift_found), never written.
    await addKey();
    expect(writes()).toEqual(['POST deploy']);
    expect(events.some((e) => e.event === 'drift_found')).toBe(true);
    expect(sink.lines.some((l) => l.msg === 'drift detected; not corrected (observe mode)')).toBe(true);
    // `ctl sync` asks for a run now: still only observed, and it says so.
    const sync = await ctl(['sync', '--socket', socket]);
    expect(sync.stdout).toBe('a run was asked for (it observes only: suspended: change freeze INC-42 since 2025-01-01T00:00:00.000Z)\n');
    await d.idle();
    expect(writes()).toEqual(['POST deploy']);

    const status = await ctl(['status', '--socket', socket, '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({ mode: 'apply', writes: false, suspended: { reason: 'change freeze INC-42', since: '2025-01-01T00:00:00.000Z', by: expect.stringMatching(/^uid \d+$/) }, window: { open: true, windows: 0 }, lastRun: { outcome: 'success' }, ready: { ready: true } });

    const resumed = await ctl(['resume', '--socket', socket]);
    expect(resumed.stdout).toBe('resumed; a run was asked for\n');
    await d.idle();
    expect(writes()).toEqual(['POST deploy', 'POST ci-bot']);
    expect(await gauge(metrics, 'amsync_suspended')).toBe(0);
    expect(await (await fetch(`${d.url}/readyz`)).text()).toBe('ready: ok\n');
    expect(events.filter((e) => e.event === 'suspension_changed')).toHaveLength(2);
    expect(sink.text()).not.toContain(PASSWORD);
  });

  it('prints the status as text', async () => {
    const { socket } = await start();
    const status = await ctl(['status', '--socket', socket]);
    expect(status.code).toBe(0);
    expect(status.stdout).toBe(
      ['mode:       apply', 'writes:     yes', 'suspended:  no', 'window:     none configured', 'last run:   success, last success 2025-01-01T00:00:00.000Z', 'ready:      yes (ok)', ''].join('\n'),
    );
  });
});

describe('sync windows', () => {
  // Every day 00:00 UTC for 2 hours: the daemon starts inside it.
  const nightly: SyncWindowSetting = { kind: 'deny', schedule: '0 0 * * *', duration: '2h' };

  it('a deny window holds a drift correction until it ends; the run at its end writes', async () => {
    const { d, time, metrics, sink } = await start([nightly]);
    expect(writes()).toEqual([]);
    expect(await gauge(metrics, 'amsync_sync_window_open')).toBe(0);
    expect(await (await fetch(`${d.url}/readyz`)).text()).toBe('ready: ok (sync window: inside a deny window ("0 0 * * *" UTC) until 2025-01-01T02:00:00.000Z)\n');
    expect(sink.lines.some((l) => typeof l.msg === 'string' && l.msg.startsWith('writes held (sync window: inside a deny window'))).toBe(true);

    // A minute before the end: nothing has run, nothing was written.
    await time.advance(2 * 3_600_000 - 60_000);
    await d.idle();
    expect(writes()).toEqual([]);
    // At its end the daemon asks for a run of its own, and it writes.
    await time.advance(60_000);
    await d.idle();
    expect(writes()).toEqual(['POST deploy']);
    expect(await gauge(metrics, 'amsync_sync_window_open')).toBe(1);
  });

  it('ctl sync --override-window writes once inside a deny window; the next run observes again', async () => {
    const { d, socket, addKey } = await start([nightly]);
    expect(writes()).toEqual([]);
    const sync = await ctl(['sync', '--override-window', '--socket', socket]);
    expect(sync.stdout).toBe('a run was asked for (it writes once, overriding the sync window)\n');
    await d.idle();
    expect(writes()).toEqual(['POST deploy']);
    await addKey();
    expect(writes()).toEqual(['POST deploy']);
  });

  it('the audit log is told when the window closes and opens as the daemon sees it, and of an override', async () => {
    const { d, time, socket, audited } = await start([nightly]);
    expect(audited).toEqual([{ event: 'window_closed', reason: 'inside a deny window ("0 0 * * *" UTC) until 2025-01-01T02:00:00.000Z', uid: null }]);
    await ctl(['sync', '--override-window', '--socket', socket]);
    await d.idle();
    expect(audited.slice(1)).toEqual([{ event: 'override', reason: 'inside a deny window ("0 0 * * *" UTC) until 2025-01-01T02:00:00.000Z', uid: expect.any(Number) }]);
    await time.advance(2 * 3_600_000);
    await d.idle();
    expect(audited.slice(2)).toEqual([{ event: 'window_opened', reason: null, uid: null }]);
  });

  it('an allow window: outside it the daemon observes', async () => {
    // 09:00-17:00 UTC on weekdays; the daemon starts at midnight.
    const { d } = await start([{ kind: 'allow', schedule: '0 9 * * 1-5', duration: '8h' }]);
    expect(writes()).toEqual([]);
    expect(d.status().writesHeld).toBe('sync window: outside every allow window');
  });
});

describe('the control socket', () => {
  it('is 0600; a second daemon over a live one is refused; a dead one\'s is replaced', async () => {
    const { socket } = await start();
    expect((await stat(socket)).mode & 0o777).toBe(0o600);
    const file = join(dir, 'access.yaml');
    const second = startInProcessDaemon(context!, { logger: logSink('info').logger, metrics: createMetrics({ version: 'test' }), options: { file, socket } });
    await expect(second).rejects.toThrow(`Another daemon is listening on the control socket ${socket}`);
    await daemon!.stop();
    daemon = undefined;

    // A socket file nobody listens on: a daemon killed with SIGKILL leaves one behind.
    const stale = join(dir, 'stale.sock');
    const child = spawn(process.execPath, ['-e', `require('node:net').createServer().listen(${JSON.stringify(stale)}, () => console.log('up'))`], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    child.kill('SIGKILL');
    await new Promise<void>((resolve) => child.once('exit', () => resolve()));
    expect((await stat(stale)).isSocket()).toBe(true);
    daemon = await startInProcessDaemon(context!, { logger: logSink('info').logger, metrics: createMetrics({ version: 'test' }), options: { file, socket: stale } });
    expect((await stat(stale)).mode & 0o777).toBe(0o600);
    expect((await ctl(['status', '--socket', stale])).code).toBe(0);
  });

  it('ctl with no daemon listening: exit 1, naming the socket', async () => {
    const socket = join(dir, 'none.sock');
    const run = await ctl(['status', '--socket', socket]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`No daemon answers on the control socket ${socket} (no such socket)`);
  });

  it('the default socket is ctl.sock beside the state file', async () => {
    const run = await ctl(['status', '--state-file', join(dir, 'st', 'state.json')]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`the control socket ${join(dir, 'st', 'ctl.sock')}`);
  });
});
