import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { waitFor } from '../helpers/daemon-deferred.js';
import { parseExposition } from '../helpers/daemon-prom-parse.js';
import { call } from '../helpers/emulator-client.js';
import { runInProcess, startDaemonInProcess, type InProcessDaemon } from '../helpers/in-process.js';
import { assertBuilt, startDaemonProcess, type DaemonProcess } from '../helpers/spawn.js';

/**
 * `amsync daemon` against the emulator over 127.0.0.1: the watch (real files, real events),
 * the schedule (fired by the test: no real cron), bad input, drift correction, /metrics and
 * shutdown. The daemon runs in-process through `run(argv, io)` with the signals in the test's
 * hands; one smoke test runs the built binary and sends it a real SIGTERM.
 */

const TOKEN = 'daemon-e2e-token-3b9f';
/** A password that must never show up in the daemon's output or metrics. */
const PASSWORD_CANARY = 'pw-canary-81d2e7';
const DEBOUNCE_MS = 300;
/** The schedule the daemon is given: in-process, no cron runs it; the test fires it. */
const SCHEDULE = '*/5 * * * *';
/** For the spawned daemon: a schedule that never fires during a test. */
const NEVER = '0 0 1 1 *';

let dir: string;
const daemons: InProcessDaemon[] = [];
const processes: DaemonProcess[] = [];
const emulators: RunningEmulator[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-daemon-e2e-'));
});

afterEach(async () => {
  for (const d of daemons.splice(0)) await d.stop();
  for (const p of processes.splice(0)) await p.kill();
  for (const e of emulators.splice(0)) await e.close();
});

afterAll(async () => {
  // A daemon stopped with a second signal exits at once; in-process, a run it left may still
  // write its state file for a moment (a process would have died): retry ENOTEMPTY.
  await rm(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 50 });
});

async function emulator(options: { latencyMs?: number } = {}): Promise<RunningEmulator> {
  const e = await startEmulator({ tokens: [TOKEN], ...options });
  emulators.push(e);
  return e;
}

async function caseDir(name: string): Promise<string> {
  const d = join(dir, name);
  await mkdir(d, { recursive: true });
  await writeFile(join(d, 'settings.yaml'), `daemon:\n  debounceMs: ${DEBOUNCE_MS}\nlogLevel: debug\n`);
  return d;
}

const daemonArgs = (d: string, file: string, e: RunningEmulator, schedule = SCHEDULE): string[] =>
  ['-f', file, '--url', e.url, '--listen', '127.0.0.1:0', '--schedule', schedule, '--state-file', join(d, 'state.json'), '--settings', join(d, 'settings.yaml')];

/** The daemon in-process: the schedule fires only when the test says so (fireSchedule). */
async function daemon(d: string, file: string, e: RunningEmulator): Promise<InProcessDaemon> {
  const p = await startDaemonInProcess(daemonArgs(d, file, e), { cwd: d, env: { AMSYNC_TOKEN: TOKEN, DEPLOY_PASSWORD: PASSWORD_CANARY } });
  daemons.push(p);
  return p;
}

function accessYaml(users: string[], keys: { name: string; roles: number[] }[] = []): string {
  const u = users.map((name) => `  - username: ${name}\n    level: n1\n    password: { env: DEPLOY_PASSWORD }\n`).join('');
  const k = keys.map((key) => `  - name: ${key.name}\n    roles: [${key.roles.join(', ')}]\n`).join('');
  return `sshUsers:\n${u || '  []\n'}apikeys:\n${k || '  []\n'}`;
}

const usernames = (e: RunningEmulator) => e.state().sshUsers.map((u) => u.username).sort();
const writes = (e: RunningEmulator) => e.requests().filter((r) => r.method !== 'GET');

/** A ConfigMap volume as the kubelet writes it: `access.yaml -> ..data/access.yaml`, `..data -> ..<ts>`. */
async function configMap(d: string, content: string) {
  const cm = join(d, 'config');
  await mkdir(cm, { recursive: true });
  let generation = 0;
  let current = '';
  const write = async (text: string) => {
    generation += 1;
    const next = `..2025_01_01_00_00_0${generation}.${1000 + generation}`;
    await mkdir(join(cm, next));
    await writeFile(join(cm, next, 'access.yaml'), text);
    await symlink(next, join(cm, '..data_tmp'));
    await rename(join(cm, '..data_tmp'), join(cm, '..data'));
    if (current) await rm(join(cm, current), { recursive: true });
    current = next;
  };
  await write(content);
  await symlink('..data/access.yaml', join(cm, 'access.yaml'));
  return { file: join(cm, 'access.yaml'), write };
}

async function scrape(p: InProcessDaemon) {
  const res = await p.get('/metrics');
  expect(res.status).toBe(200);
  return { text: res.text, e: parseExposition(res.text) };
}

describe('amsync daemon: the watch', () => {
  it('applies an edit made by a ConfigMap `..data` swap; an invalid edit writes nothing and recovers', async () => {
    const e = await emulator();
    const d = await caseDir('configmap');
    const cm = await configMap(d, accessYaml(['deploy'], [{ name: 'billing', roles: [1] }]));
    const p = await daemon(d, cm.file, e);

    await waitFor(() => usernames(e).join() === 'deploy' && e.state().apikeys.length === 1, 'the start sync');
    await waitFor(async () => (await p.get('/readyz')).status === 200, 'readiness');
    expect((await p.get('/healthz')).text).toBe('ok\n');

    // An edit, through the symlink swap the kubelet does. Only the watch can start a run here
    // (the schedule never fires); how soon after the debounce is a unit test in virtual time
    // (test/unit/daemon/debounce-and-loop.test.ts), not a wall-clock bound.
    await cm.write(accessYaml(['deploy', 'alice'], [{ name: 'billing', roles: [1] }]));
    await waitFor(() => usernames(e).includes('alice'), 'the edit to be applied', 15_000, 20);
    expect(p.logs.some((l) => l.msg === 'sync started' && Array.isArray(l.reasons) && l.reasons.includes('file'))).toBe(true);

    // An invalid edit: a typo in a key.
    const before = p.logs.length;
    e.clearRequests();
    await cm.write(accessYaml(['deploy', 'alice', 'bob']).replace('level: n1', 'levl: n1'));
    const positioned = await p.waitForLog((l) => l.level >= 50 && /access\.yaml:\d+:\d+: error: .*levl/.test(l.msg), 'the positioned error', 15_000, before);
    expect(positioned).toMatchObject({ line: expect.any(Number), col: expect.any(Number) });
    await p.waitForLog((l) => l.msg === 'sync finished' && l.outcome === 'invalid_input', 'the invalid run to end', 15_000, before);
    expect((await scrape(p)).e.value('amsync_config_valid')).toBe(0);
    expect(writes(e)).toEqual([]);
    expect(usernames(e)).toEqual(['alice', 'deploy']);
    // The last good version stays applied: the pod stays ready.
    expect((await p.get('/readyz')).status).toBe(200);

    // Fixed: it recovers by itself.
    await cm.write(accessYaml(['deploy', 'alice', 'bob'], [{ name: 'billing', roles: [1] }]));
    await waitFor(() => usernames(e).includes('bob'), 'the fixed file to be applied');
    await waitFor(async () => (await scrape(p)).e.value('amsync_config_valid') === 1, 'config_valid 1');
    expect(p.output()).not.toContain(PASSWORD_CANARY);
    expect(p.output()).not.toContain(TOKEN);
  });

  it("follows an editor's atomic save of a plain file, and a rotated secret file", async () => {
    const e = await emulator();
    const d = await caseDir('editor');
    const file = join(d, 'access.yaml');
    const secretDir = join(d, 'secrets');
    await mkdir(secretDir);
    await writeFile(join(secretDir, 'alice'), 'first-password');
    const withSecret = (users: string[]) =>
      `${accessYaml(users)}`.replace('sshUsers:\n', 'sshUsers:\n  - username: alice\n    password: { file: secrets/alice }\n');
    await writeFile(file, withSecret(['deploy']));
    const p = await daemon(d, file, e);
    await waitFor(() => usernames(e).join() === 'alice,deploy', 'the start sync');
    const version = () => e.state().sshUsers.find((u) => u.username === 'alice')!.passwordVersion;
    const v1 = version();

    await writeFile(join(d, '.access.yaml.swp'), withSecret(['deploy', 'carol']));
    await rename(join(d, '.access.yaml.swp'), file);
    await waitFor(() => usernames(e).includes('carol'), 'the saved edit', 15_000, 20);

    // A rotated password file re-syncs, and the new password is set.
    await writeFile(join(secretDir, 'alice'), 'second-password');
    await waitFor(() => version() > v1, 'the rotated password to be set');
    expect(p.output()).not.toMatch(/first-password|second-password/);
  });
});

describe('amsync daemon: drift correction and metrics', () => {
  it('corrects drift made by hand at the next scheduled run, and /metrics says so without naming anyone', async () => {
    const startedAt = Date.now();
    const e = await emulator();
    const d = await caseDir('drift');
    const file = join(d, 'access.yaml');
    await writeFile(file, accessYaml(['deploy', 'alice'], [{ name: 'billing', roles: [1, 2] }]));
    // One pushback on the first listing: retried by the client, and counted.
    e.setFaults({ rules: [{ method: 'GET', path: '^/api/sshusers$', status: 503, retryAfter: 0, times: 1 }] });
    const p = await daemon(d, file, e);
    await waitFor(() => usernames(e).join() === 'alice,deploy' && e.state().apikeys.length === 1, 'the start sync');
    await waitFor(async () => (await p.get('/readyz')).status === 200, 'readiness');

    // Drift by hand, straight through the API: a user deleted, a key's roles changed, a user added.
    const from = p.logs.length;
    const alice = e.state().sshUsers.find((u) => u.username === 'alice')!;
    const billing = e.state().apikeys[0]!;
    expect((await call(e.url, 'DELETE', `/api/sshusers/${alice.id}`, { token: TOKEN })).status).toBe(200);
    expect((await call(e.url, 'PUT', `/api/3rdparty/apikeys/${billing.id}`, { token: TOKEN, body: { roles: [4] } })).status).toBe(200);
    expect((await call(e.url, 'POST', '/api/sshusers', { token: TOKEN, body: { username: 'mallory-by-hand', level: 'n1', password: 'x' } })).status).toBe(200);

    // The next scheduled time comes (the test is the cron): one run corrects all of it.
    p.fireSchedule();
    await waitFor(() => usernames(e).includes('alice') && e.state().apikeys[0]!.roles.map((r) => r.id).join() === '1,2', 'the drift to be corrected', 15_000);
    await p.waitForLog((l) => l.msg === 'sync finished' && l.outcome === 'success' && Number(l.update) >= 1, 'the correcting run', 15_000, from);
    const runs = p.logs.slice(from).filter((l) => l.msg === 'sync finished');
    expect(runs).toHaveLength(1);
    const total = (field: string) => runs.reduce((sum, l) => sum + Number(l[field] ?? 0), 0);
    expect({ create: total('create'), update: total('update'), delete: total('delete') }).toEqual({ create: 1, update: 1, delete: 0 });
    expect(runs.at(-1)).toMatchObject({ unmanaged: 1 });
    // The file never changed: the schedule started the correcting run, and nothing else did.
    const started = p.logs.slice(from).filter((l) => l.msg === 'sync started');
    expect(started.map((l) => l.reasons)).toEqual([['schedule']]);
    // Not pruned: the hand-made user is only reported.
    expect(usernames(e)).toContain('mallory-by-hand');

    const { text, e: m } = await scrape(p);
    expect(m.value('amsync_changes_total', { kind: 'sshUser', action: 'create', outcome: 'applied' })).toBeGreaterThanOrEqual(3);
    expect(m.value('amsync_changes_total', { kind: 'apikey', action: 'update', outcome: 'applied' })).toBe(1);
    expect(m.value('amsync_unmanaged_items', { kind: 'sshUser' })).toBe(1);
    expect(m.value('amsync_config_valid')).toBe(1);
    expect(m.value('amsync_ready')).toBe(1);
    expect(m.value('amsync_sync_runs_total', { outcome: 'success' })).toBeGreaterThanOrEqual(2);
    // A timestamp in seconds of a run of this test: not before it started (no bound on how long it took).
    expect(m.value('amsync_last_successful_sync_timestamp_seconds')).toBeGreaterThanOrEqual(Math.floor(startedAt / 1000));
    expect(m.value('amsync_api_requests_total', { method: 'GET', route: '/api/sshusers', status: '200' })).toBeGreaterThanOrEqual(2);
    expect(m.value('amsync_api_requests_total', { method: 'POST', route: '/api/sshusers', status: '200' })).toBeGreaterThanOrEqual(3);
    expect(m.value('amsync_api_requests_total', { method: 'GET', route: '/api/sshusers', status: '503' })).toBe(1);
    expect(m.value('amsync_api_retries_total', { method: 'GET', route: '/api/sshusers', reason: 'unavailable' })).toBe(1);
    expect(m.value('amsync_api_throttled_total', { method: 'GET', route: '/api/sshusers', status: '503' })).toBe(1);
    expect(m.value('amsync_rate_limiter_rate')).toBeGreaterThan(0);
    expect([...m.families.keys()].filter((n) => n.startsWith('amsync_build_info'))).toHaveLength(1);
    for (const s of m.samples()) {
      for (const v of Object.values(s.labels)) expect(v).not.toMatch(/alice|deploy|mallory|billing/);
    }
    expect(text).not.toContain(PASSWORD_CANARY);
    expect(text).not.toContain(TOKEN);
    if (process.env.AMSYNC_PRINT_METRICS) console.info(text);
  });
});

describe('amsync daemon: shutdown', () => {
  it('on SIGTERM during a slow apply, lets the write already sent finish and exits 0 (the built binary, a real signal)', async () => {
    assertBuilt();
    const e = await emulator();
    const d = await caseDir('sigterm');
    const file = join(d, 'access.yaml');
    await writeFile(file, accessYaml(['deploy']));
    const p = await startDaemonProcess(daemonArgs(d, file, e, NEVER), { AMSYNC_TOKEN: TOKEN, DEPLOY_PASSWORD: PASSWORD_CANARY }, d);
    processes.push(p);
    await waitFor(() => usernames(e).join() === 'deploy', 'the start sync');
    await p.waitForLog((l) => l.msg === 'sync finished', 'the start run to end');

    // Every request now takes 0.5 to 1.5 s.
    e.setFaults({ latencyMs: 1000 });
    e.clearRequests();
    await writeFile(file, accessYaml(['deploy', 'slow-user']));
    // Once both listings and the scope check (GET /api/user/info) have answered and the POST has
    // arrived (held by the latency): stop now. Stopped any earlier, the POST is never sent.
    const answered = (path: string) => e.requests().some((r) => r.method === 'GET' && r.path === path && r.status === 200);
    await waitFor(() => answered('/api/sshusers') && answered('/api/3rdparty/apikeys') && answered('/api/user/info') && e.inFlight() > 0, 'the create of the slow run to arrive', 15_000, 10);
    expect(usernames(e)).not.toContain('slow-user');
    p.child.kill('SIGTERM');
    const exit = await p.exit;
    expect(exit).toEqual({ code: 0, signal: null });
    // The apply finished before the exit: the user exists and the log says so, in order.
    expect(usernames(e)).toContain('slow-user');
    const msgs = p.logs.map((l) => l.msg);
    expect(msgs.indexOf('change applied', msgs.indexOf('stopping: the run in progress sends nothing more; the requests it already sent finish'))).toBeGreaterThan(-1);
    expect(msgs.at(-1)).toBe('stopped');
    expect(p.logs.at(-1)).toMatchObject({ finished: true });
  });

  it('exits at once on a second signal', async () => {
    const e = await emulator();
    const d = await caseDir('second-signal');
    const file = join(d, 'access.yaml');
    await writeFile(file, accessYaml(['deploy']));
    const p = await daemon(d, file, e);
    await p.waitForLog((l) => l.msg === 'sync finished', 'the start run to end');
    e.setFaults({ latencyMs: 20_000 });
    await writeFile(file, accessYaml(['deploy', 'never']));
    await p.waitForLog((l) => l.msg === 'sync started' && Array.isArray(l.reasons) && l.reasons.includes('file'), 'the slow run to start');
    p.signal('SIGTERM');
    await p.waitForLog((l) => String(l.msg).startsWith('stopping'), 'the graceful stop');
    p.signal('SIGINT');
    expect(await p.exit).toBe(130);
    expect(p.logs.some((l) => l.msg === 'second signal: exiting now')).toBe(true);
  });
});

describe('amsync daemon: SIGHUP', () => {
  it('re-reads the settings: switched to observe, it reports drift and corrects nothing', async () => {
    const e = await emulator();
    const d = await caseDir('sighup');
    const file = join(d, 'access.yaml');
    await writeFile(file, accessYaml(['deploy', 'alice']));
    const p = await daemon(d, file, e);
    await waitFor(() => usernames(e).join() === 'alice,deploy', 'the start sync');
    await p.waitForLog((l) => l.msg === 'sync finished', 'the start run to end');

    await writeFile(join(d, 'settings.yaml'), `daemon:\n  debounceMs: ${DEBOUNCE_MS}\n  mode: observe\nlogLevel: debug\n`);
    const alice = e.state().sshUsers.find((u) => u.username === 'alice')!;
    expect((await call(e.url, 'DELETE', `/api/sshusers/${alice.id}`, { token: TOKEN })).status).toBe(200);
    const from = p.logs.length;
    e.clearRequests();
    p.signal('SIGHUP');
    await p.waitForLog((l) => l.msg === 'mode changed' && l.to === 'observe', 'the new mode', 15_000, from);
    const drift = await p.waitForLog((l) => String(l.msg).startsWith('drift detected; not corrected (observe mode)'), 'the drift report', 15_000, from);
    expect(drift.changes).toEqual(['create sshUser alice']);
    expect(writes(e)).toEqual([]);
    expect(usernames(e)).toEqual(['deploy']);
    expect((await scrape(p)).e.value('amsync_drifted_items', { kind: 'sshUser' })).toBe(1);
  });
});

describe('amsync daemon: refusing to start', () => {
  it('exits 64 without a URL, or with a bad --schedule, --listen or --mode', async () => {
    const file = join(dir, 'refuse.yaml');
    await writeFile(file, accessYaml([]));
    const cases: [string[], RegExp][] = [
      [['-f', file], /no service URL/],
      [['-f', file, '--url', 'http://127.0.0.1:1', '--schedule', 'every minute'], /--schedule/],
      [['-f', file, '--url', 'http://127.0.0.1:1', '--listen', 'nowhere'], /--listen/],
      [['-f', file, '--url', 'http://127.0.0.1:1', '--mode', 'yolo'], /apply|observe/],
    ];
    for (const [args, message] of cases) {
      // Refused before the daemon starts anything (no signal handler, no listener): in-process.
      const result = await runInProcess(['daemon', ...args], { cwd: dir, env: { AMSYNC_TOKEN: TOKEN } });
      expect(result.code, args.join(' ')).toBe(64);
      expect(result.stderr).toMatch(message);
    }
  });

  it('exits 1 when the listen address is taken', async () => {
    const e = await emulator();
    const d = await caseDir('taken');
    const file = join(d, 'access.yaml');
    await writeFile(file, accessYaml([]));
    const first = await daemon(d, file, e);
    const port = new URL(first.url).port;
    const result = await runInProcess(['daemon', '-f', file, '--url', e.url, '--listen', `127.0.0.1:${port}`], { cwd: d, env: { AMSYNC_TOKEN: TOKEN } });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/Cannot listen on 127\.0\.0\.1:\d+: EADDRINUSE/);
  });
});
