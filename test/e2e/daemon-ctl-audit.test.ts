import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { runInProcess, startDaemonInProcess, type InProcessDaemon } from '../helpers/in-process.js';

/**
 * Issue 29 item 7, "both appear in … the audit log": `amsync ctl suspend` and `resume` of a
 * running `amsync daemon --audit-log FILE` are control lines of that log, beside its write
 * lines, and `amsync audit` shows them (not as lines it passes over). The daemon is the real
 * command, in process, against the emulator; its writes are checked in the request log.
 */

const TOKEN = 'CANARY-bearer-ctl-audit-5e21';
const PASSWORD = 'CANARY-password-ctl-audit-77aa';
const uid = typeof process.getuid === 'function' ? process.getuid() : null;

let dir: string;
let emu: RunningEmulator;
let daemon: InProcessDaemon | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-ctl-audit-'));
  emu = await startEmulator({ tokens: [TOKEN] });
});

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await emu.close();
  await rm(dir, { recursive: true, force: true });
});

const writes = () => emu.requests().filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.item?.name ?? r.path}`);

describe('suspend and resume in the audit log', () => {
  it('each is one control line (event, reason, uid, time); `amsync audit` shows them with the writes', async () => {
    const file = join(dir, 'access.yaml');
    const log = join(dir, 'audit.jsonl');
    const socket = join(dir, 'ctl.sock');
    await writeFile(file, 'sshUsers:\n  - username: deploy\n    password: { env: DEPLOY_PASSWORD }\n');
    daemon = await startDaemonInProcess(['-f', file, '--url', emu.url, '--listen', '127.0.0.1:0', '--schedule', '0 0 1 1 *', '--state-file', join(dir, 'state.json'), '--audit-log', log], {
      cwd: dir,
      env: { AMSYNC_TOKEN: TOKEN, DEPLOY_PASSWORD: PASSWORD, AMSYNC_INITIAL_RATE: '1000' },
    });
    await daemon.waitForLog((l) => l.msg === 'sync finished', 'the start run', 15_000);
    expect(writes()).toEqual(['POST deploy']);

    const suspended = await runInProcess(['ctl', 'suspend', '--socket', socket, '--reason', 'change freeze INC-7'], { cwd: dir, env: {} });
    expect(suspended.code).toBe(0);
    const from = daemon.logs.length;
    const resumed = await runInProcess(['ctl', 'resume', '--socket', socket], { cwd: dir, env: {} });
    expect(resumed.stdout).toBe('resumed; a run was asked for\n');
    await daemon.waitForLog((l) => l.msg === 'sync finished', 'the run after the resume', 15_000, from);

    const lines = (await readFile(log, 'utf8')).split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
    // The start run's write (attempt, result), then the two control lines, in that order.
    expect(lines.map((l) => l.event ?? `${String(l.action)} ${String(l.phase)}`)).toEqual(['create attempt', 'create result', 'suspended', 'resumed']);
    const control = lines.slice(2);
    expect(control).toEqual([
      { time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), event: 'suspended', target: null, reason: 'change freeze INC-7', uid, revision: null, process: expect.objectContaining({ pid: process.pid }) },
      { time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), event: 'resumed', target: null, reason: 'change freeze INC-7', uid, revision: null, process: expect.objectContaining({ pid: process.pid }) },
    ]);

    const table = await runInProcess(['audit', log], { cwd: dir, env: {} });
    expect(table).toMatchObject({ code: 0, stderr: '' });
    const rows = table.stdout.split('\n');
    expect(rows[0]).toMatch(/^time +action +kind +key +id +status +trigger +revision$/);
    const by = uid === null ? '-' : `by uid ${uid}`;
    expect(rows.slice(3, 5).map((r) => r.split(/ {2,}/).slice(1))).toEqual([
      ['suspended', 'daemon', 'change freeze INC-7', '-', by, 'ctl', '-'],
      ['resumed', 'daemon', 'change freeze INC-7', '-', by, 'ctl', '-'],
    ]);
    const json = await runInProcess(['audit', log, '--json'], { cwd: dir, env: {} });
    expect(json.stderr).toBe('');
    expect(json.stdout.trimEnd().split('\n').map((l) => (JSON.parse(l) as { event?: string }).event ?? null)).toEqual([null, null, 'suspended', 'resumed']);
    // `--key` is about writes: the control lines are left out.
    const keyed = await runInProcess(['audit', log, '--key', 'deploy', '--json'], { cwd: dir, env: {} });
    expect(keyed.stdout.trimEnd().split('\n')).toHaveLength(2);
    expect(await readFile(log, 'utf8')).not.toContain(PASSWORD);
  });
});
