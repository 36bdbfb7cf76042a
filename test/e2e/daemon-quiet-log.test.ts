import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator, type RunningTenants } from '../../src/emulator/index.js';
import { resetTenants } from '../helpers/emulator-per-test.js';
import { waitFor } from '../helpers/daemon-deferred.js';
import { startDaemonInProcess, type InProcessDaemon } from '../helpers/in-process.js';
import type { LogLine } from '../helpers/spawn.js';

/**
 * Issue 31 item 5: the daemon logs one line per run at info — `sync finished`, with what started
 * it, the outcome, the changes, the drift, the failures and the duration — and the detail (the
 * run's start, each change, the drift named) at debug. A fleet daemon: one line per target run.
 * Every JSON line the daemon writes to stderr is counted.
 */

const TOKEN = 'CANARY-quiet-log-5e21';
const PASSWORD = 'CANARY-pw-quiet-log-77b0';
const NEVER = '0 0 1 1 *';

let dir: string;
const daemons: InProcessDaemon[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-quiet-log-'));
});
afterEach(async () => {
  for (const d of daemons.splice(0)) await d.stop();
  await rm(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 50 });
});

const runLines = (logs: readonly LogLine[]) => logs.filter((l) => l.msg === 'sync finished');

describe('one service: one line per run at info', () => {
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await startEmulator({ tokens: [TOKEN] });
  });
  afterAll(async () => {
    await emu.close();
  });
  beforeEach(async () => {
    emu.reset();
    emu.clearRequests();
    emu.seed({ sshUsers: [{ username: 'old', level: 'n1', password: 'x' }] });
    await writeFile(join(dir, 'access.yaml'), 'sshUsers:\n  - username: deploy\n    password: { env: PW }\n  - username: ops\n    password: { env: PW }\n  - username: old\n    ensure: absent\napikeys:\n  - name: ci\n    roles: [1]\n');
  });

  /** The daemon's first run (4 changes), then drift made by hand (1 change) corrected by the schedule. */
  async function twoRuns(level: string[]): Promise<{ d: InProcessDaemon; started: number }> {
    const d = await startDaemonInProcess(['-f', 'access.yaml', '--url', emu.url, '--listen', '127.0.0.1:0', '--schedule', NEVER, '--state-file', 'state.json', ...level], {
      cwd: dir,
      env: { AMSYNC_TOKEN: TOKEN, PW: PASSWORD },
    });
    daemons.push(d);
    const started = d.logs.findIndex((l) => l.msg === 'daemon started');
    await d.waitForLog((l) => l.msg === 'sync finished', 'the first run');
    const from = d.logs.length;
    emu.seed({ sshUsers: [{ username: 'old', level: 'n1', password: 'x' }] });
    d.fireSchedule();
    await d.waitForLog((l) => l.msg === 'sync finished', 'the scheduled run', 15_000, from);
    return { d, started };
  }

  it('at info: after "daemon started", exactly one line per run, carrying the counts, the drift and the duration', async () => {
    const { d, started } = await twoRuns([]);
    const after = d.logs.slice(started + 1);
    expect(after.map((l) => l.msg)).toEqual(['sync finished', 'sync finished']);
    const [first, second] = after;
    expect(first).toMatchObject({ level: 30, outcome: 'success', reasons: ['start'], dryRun: false, changes: 4, drift: 4, applied: 4, failed: 0, create: 3, delete: 1 });
    expect(second).toMatchObject({ level: 30, outcome: 'success', reasons: ['schedule'], changes: 1, drift: 1, applied: 1, failed: 0 });
    for (const line of after) expect(typeof line.durationMs).toBe('number');
    // What the lines say is what the service received.
    expect(emu.requests().filter((r) => r.method !== 'GET')).toHaveLength(5);
    expect(d.output()).not.toContain(PASSWORD);
  });

  it('at debug: the detail is back — the run starting and each change', async () => {
    const { d, started } = await twoRuns(['--log-level', 'debug']);
    const after = d.logs.slice(started + 1);
    const at = (msg: string) => after.filter((l) => l.msg === msg).map((l) => l.level);
    // Debug lines (20): the detail; the run's line stays at info (30).
    expect(at('sync started')).toEqual([20, 20]);
    expect(at('change applied')).toEqual([20, 20, 20, 20, 20]);
    expect(at('sync finished')).toEqual([30, 30]);
  });

  it('observe mode: the drift is counted in the run line at info, named at debug only', async () => {
    const d = await startDaemonInProcess(['-f', 'access.yaml', '--url', emu.url, '--listen', '127.0.0.1:0', '--schedule', NEVER, '--state-file', 'state.json', '--mode', 'observe'], {
      cwd: dir,
      env: { AMSYNC_TOKEN: TOKEN, PW: PASSWORD },
    });
    daemons.push(d);
    const started = d.logs.findIndex((l) => l.msg === 'daemon started');
    const line = await d.waitForLog((l) => l.msg === 'sync finished', 'the first run');
    expect(line).toMatchObject({ dryRun: true, changes: 4, drift: 4, applied: 0 });
    expect(d.logs.slice(started + 1).map((l) => l.msg)).toEqual(['sync finished']);
    expect(emu.requests().filter((r) => r.method !== 'GET')).toEqual([]);
  });
});

describe('a fleet: one line per target run at info', () => {
  let tenants: RunningTenants;
  beforeAll(async () => {
    tenants = await startEmulator({ tokens: [TOKEN], tenants: ['east', 'west'] });
  });
  afterAll(async () => {
    await tenants.close();
  });

  it('each target run is one `sync finished` line naming its target; the changes are at debug', async () => {
    resetTenants(tenants, { tokens: [TOKEN], readOnlyTokens: [] });
    for (const t of ['east', 'west']) tenants.tenant(t).seed({ apikeys: [{ name: 'billing', roles: [3] }, { name: 'stray' }] });
    await writeFile(join(dir, 'access.yaml'), 'apikeys:\n  - name: billing\n    roles: [2]\nprune:\n  apikeys: true\n');
    await writeFile(
      join(dir, 'targets.yaml'),
      `targets:\n  - name: east\n    url: ${tenants.tenant('east').url}\n    token: { env: FLEET_TOKEN }\n  - name: west\n    url: ${tenants.tenant('west').url}\n    token: { env: FLEET_TOKEN }\n`,
    );
    const d = await startDaemonInProcess(['--targets', 'targets.yaml', '--listen', '127.0.0.1:0', '--schedule', NEVER, '--state-file', join(dir, 'state.json')], {
      cwd: dir,
      env: { FLEET_TOKEN: TOKEN, AMSYNC_INITIAL_RATE: '1000' },
    });
    daemons.push(d);
    await waitFor(() => (runLines(d.logs).length >= 2 ? true : undefined), 'a run of both targets');
    const started = d.logs.findIndex((l) => l.msg === 'fleet daemon started');
    const after = d.logs.slice(started + 1);
    expect(after.map((l) => l.msg)).toEqual(['sync finished', 'sync finished']);
    expect(after.map((l) => l.target).sort()).toEqual(['east', 'west']);
    for (const line of after) expect(line).toMatchObject({ outcome: 'success', changes: 2, drift: 2, applied: 2 });
  });
});
