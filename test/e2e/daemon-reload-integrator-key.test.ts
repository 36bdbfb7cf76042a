import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { call } from '../helpers/emulator-client.js';
import { startDaemonInProcess, type InProcessDaemon } from '../helpers/in-process.js';

/**
 * Issue 27, deliverable 4 ("never lose the integrator key"), at a settings reload: the daemon
 * keeps a rotated key it could not write back in memory. A SIGHUP used to build a new client
 * whose new key provider read the key file (the retired key, or nothing at all) and locked the
 * daemon out; the new client now takes over the old one's credential when its settings did not
 * change.
 */

const KEY = 'integrator-key-reload-1';
const PASSWORD = 'pw-reload-canary';
const ADMIN = 'drift-maker-token';

let dir: string;
let emu: RunningEmulator;
let daemon: InProcessDaemon | undefined;
/** The emulator's clock runs ahead by this much: its access tokens expire without the test waiting. */
let skew = 0;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-ik-reload-'));
  // A retired key stops working at once: the daemon must never send one.
  skew = 0;
  emu = await startEmulator({ tokens: [ADMIN], refreshTokens: [KEY], rotateRefreshTokens: true, refreshTokenGraceSeconds: 0, accessTokenTtlSeconds: 600, clock: () => Date.now() + skew });
});

afterEach(async () => {
  await daemon?.stop();
  await emu.close();
  daemon = undefined;
  await rm(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 50 });
});

const access = (users: string[]) => `sshUsers:\n${users.map((u) => `  - username: ${u}\n    password: { env: DEPLOY_PASSWORD }\n`).join('')}`;
const usernames = () => emu.state().sshUsers.map((u) => u.username).sort();

describe('amsync daemon: a settings reload keeps the integrator key', () => {
  it('a rotated key held only in memory survives a SIGHUP: the run after it still authenticates', async () => {
    const keys = join(dir, 'keys');
    await mkdir(keys);
    const keyFile = join(keys, 'integrator-key');
    await writeFile(keyFile, `${KEY}\n`, { mode: 0o600 });
    const file = join(dir, 'access.yaml');
    await writeFile(file, access(['deploy']));
    await writeFile(join(dir, 'settings.yaml'), 'daemon:\n  debounceMs: 300\n');
    const args = ['-f', file, '--url', emu.url, '--listen', '127.0.0.1:0', '--schedule', '0 0 1 1 *', '--state-file', join(dir, 'state.json'), '--settings', join(dir, 'settings.yaml')];
    daemon = await startDaemonInProcess(args, { cwd: dir, env: { AMSYNC_REFRESH_TOKEN_FILE: keyFile, DEPLOY_PASSWORD: PASSWORD, AMSYNC_INITIAL_RATE: '1000' } });
    const p = daemon;
    await p.waitForLog((l) => l.msg === 'sync finished', 'the start run');
    expect(usernames()).toEqual(['deploy']);
    expect(emu.oauth()).toMatchObject({ exchanges: 1, rejected: 0 });

    // Now the key file cannot be written (nor read): a renewal that rotates keeps the key in memory.
    await rename(keys, `${keys}-away`);
    await writeFile(keys, 'not a folder\n');
    // The service's access token expires: the next run's first request meets a 401 and renews, and the key rotates.
    skew += 700_000;
    await writeFile(file, access(['deploy', 'alice']));
    let from = p.logs.length;
    await p.waitForLog((l) => l.msg === 'sync finished' || l.msg === 'sync failed; nothing more was changed', 'the run after the rotation', 15_000, from);
    expect(usernames()).toEqual(['alice', 'deploy']);
    expect(emu.oauth()).toMatchObject({ exchanges: 2, rejected: 0 });
    expect((await p.get('/readyz')).status).toBe(503);

    // The volume is back, still holding the key the last renewal retired; then a reload, with
    // the credential settings unchanged: the key in memory goes on, the retired one is never sent.
    await rm(keys);
    await rename(`${keys}-away`, keys);
    // Drift for the run the reload starts to correct.
    const alice = emu.state().sshUsers.find((u) => u.username === 'alice')!;
    expect((await call(emu.url, 'DELETE', `/api/sshusers/${alice.id}`, { token: ADMIN })).status).toBe(200);
    const rejectedBefore = emu.oauth().rejected;
    from = p.logs.length;
    emu.clearRequests();
    p.signal('SIGHUP');
    const reloaded = await p.waitForLog((l) => l.msg === 'settings reloaded', 'the reload', 15_000, from);
    const end = await p.waitForLog((l) => l.msg === 'sync finished' || l.msg === 'sync failed; nothing more was changed', 'the run after the reload', 15_000, p.logs.indexOf(reloaded));
    expect(end.msg).toBe('sync finished');
    expect(usernames()).toEqual(['alice', 'deploy']);
    expect(emu.oauth().rejected).toBe(rejectedBefore);
    expect(emu.requests().filter((r) => r.status === 401)).toEqual([]);
  });
});
