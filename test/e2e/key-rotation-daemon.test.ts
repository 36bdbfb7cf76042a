import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServiceContext, type ServiceContext } from '../../src/cli/service-context.js';
import { type RunningDaemon } from '../../src/daemon/index.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { createMetrics } from '../../src/obs/metrics.js';
import { logSink } from '../helpers/daemon-fakes.js';
import { VirtualTime } from '../helpers/virtual-time.js';
import { startInProcessDaemon } from '../helpers/in-process-daemon.js';

/**
 * Issue 30 item 3: the running daemon wakes for a key's rotation that falls due and for the end
 * of its overlap, as it does at an expiry, not only on its schedule. In process against the
 * emulator, on a virtual clock (2025-01-01T00:00:00Z at its start) whose schedule never fires.
 */

const TOKEN = 'CANARY-bearer-rotdaemon-77b2';
const MINUTE = 60_000;

let dir: string;
let emu: RunningEmulator;
let context: ServiceContext | undefined;
let daemon: RunningDaemon | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-rotdaemon-'));
  emu = await startEmulator({ tokens: [TOKEN] });
  await writeFile(join(dir, 'settings.yaml'), `auditLog: ${join(dir, 'audit.jsonl')}\nstateFile: ${join(dir, 'state.json')}\ntokensDir: ${join(dir, 'tokens')}\n`);
});

afterEach(async () => {
  await daemon?.stop();
  context?.close();
  await emu.close();
  daemon = undefined;
  context = undefined;
  await rm(dir, { recursive: true, force: true });
});

const env = { AMSYNC_TOKEN: TOKEN, AMSYNC_INITIAL_RATE: '1000' };
const keyLog = () => emu.requests().filter((r) => r.path.startsWith('/api/3rdparty/apikeys') && !(r.method === 'GET' && r.path === '/api/3rdparty/apikeys')).map((r) => `${r.method} ${r.path}`);
const keys = () => emu.state().apikeys.filter((k) => k.name === 'ci-build');
const sinkToken = () => readFile(join(dir, 'tokens', 'ci-build'), 'utf8');

async function startDaemonAt(file: string) {
  const sink = logSink('debug');
  context = await createServiceContext({ file: [file], url: emu.url, settings: join(dir, 'settings.yaml') }, { env, stderr: process.stderr }, { logger: sink.logger });
  const ctx = context;
  const time = new VirtualTime();
  // The schedule is a year away (and the fake cron never fires by itself): only the rotation's wake-up starts a run.
  daemon = await startInProcessDaemon(ctx, { logger: sink.logger, metrics: createMetrics({ version: 'test' }), options: { file, watch: [file], socket: join(dir, 'ctl.sock') }, timers: time });
  return { d: daemon, time, sink };
}

describe('key rotation: the running daemon wakes for it', () => {
  it('runs when the rotation falls due (a successor, its token in the sink) and when the overlap ends (the predecessor deleted)', async () => {
    const file = join(dir, 'access.yaml');
    await writeFile(file, 'apikeys:\n  - name: ci-build\n    roles: [1]\n    rotate: { every: 1h, overlap: 10m }\n');
    const { d, time, sink } = await startDaemonAt(file);
    const [first] = keys();
    expect(await sinkToken()).toBe(first!.token);

    // Not due yet: no run, no request.
    emu.clearRequests();
    await time.advance(60 * MINUTE - 1_000);
    await d.idle();
    expect(emu.requests()).toEqual([]);

    // The rotation falls due: a run starts on the daemon's timer, creates the successor, writes its token.
    await time.advance(1_000);
    await d.idle();
    expect(keyLog()).toEqual(['POST /api/3rdparty/apikeys']);
    const successor = keys().find((k) => k.id !== first!.id)!;
    expect(await sinkToken()).toBe(successor.token);
    expect(sink.lines.some((l) => l.msg === 'an expiry or a key rotation is due: run')).toBe(true);

    // During the overlap: nothing.
    emu.clearRequests();
    await time.advance(10 * MINUTE - 1_000);
    await d.idle();
    expect(emu.requests()).toEqual([]);

    // The overlap ends: the predecessor's verified delete, at once.
    await time.advance(1_000);
    await d.idle();
    expect(keyLog().slice(0, 2)).toEqual([`GET /api/3rdparty/apikeys/${first!.id}`, `DELETE /api/3rdparty/apikeys/${first!.id}`]);
    expect(keys().map((k) => k.id)).toEqual([successor.id]);
    expect(await sinkToken()).toBe(successor.token);
    expect(sink.text()).not.toContain(successor.token);
  });
});
