import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CredentialError } from '../../src/api/index.js';
import { createServiceContext, type ServiceContext } from '../../src/cli/service-context.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { systemTimers, type Timers } from '../../src/time/timers.js';

/**
 * Issue 27 review, fault 1: the run's last request can start the renewal of the access token
 * (past 80% of its life) and go on with the old token. Nothing read that renewal's outcome: a
 * one-shot run ended with exit 0 while the service had rotated the key and amsync could not
 * write the new one back (the file still held the retired key). Ending a one-shot command now
 * waits for the renewal and fails with `integrator_key_not_persisted`, naming the file.
 */

const KEY = 'integrator-key-last-request-1';
let dir: string;
let skew = 0;
let emu: RunningEmulator;
let context: ServiceContext | undefined;
/** The client's clock just before its first exchange: the token's life is counted from no earlier. */
let loggedInAt = 0;

/** The client's clock, moved by `skew` (the emulator's moves with it): a token ages without waiting. */
const timers: Timers = { ...systemTimers, now: () => systemTimers.now() + skew, wallNow: () => Date.now() + skew };

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-ik-end-'));
  skew = 0;
  emu = await startEmulator({ refreshTokens: [KEY], accessTokenTtlSeconds: 100, rotateRefreshTokens: true, refreshTokenGraceSeconds: 0, clock: () => Date.now() + skew });
});

afterEach(async () => {
  context?.close();
  context = undefined;
  await emu.close();
  await rm(dir, { recursive: true, force: true });
});

async function oneShotContext(keyFile: string): Promise<ServiceContext> {
  await writeFile(keyFile, `${KEY}\n`, { mode: 0o600 });
  // As a one-shot command makes it: no keepUnpersistedKey.
  // One request in 2 s: of two requests queued together, the second goes on the wire 2 s after the first.
  return createServiceContext({ url: emu.url, refreshTokenFile: keyFile, stateFile: join(dir, 'state.json') }, { env: { AMSYNC_RATE: '0.5' }, stderr: process.stderr }, { timers });
}

/**
 * The run's last requests: both ready() at 78.5 s of the 100 s token (no renewal due), the
 * second taken from the queue 2 s later, past 80 s,, where it starts the renewal beside it and goes on
 * with the old token. Nothing in the run waits for that renewal.
 */
async function lastRequestsStartRenewal(client: ReturnType<ServiceContext['client']>): Promise<void> {
  skew = loggedInAt + 78_500 - systemTimers.now();
  await Promise.all([client.listSshUsers(), client.listApikeys()]);
}

describe('the end of a one-shot run with a key renewal started by its last request', () => {
  it('a rotated key that could not be written back fails the run, naming the file (was: exit 0, key lost)', async () => {
    const keyFile = join(dir, 'key');
    context = await oneShotContext(keyFile);
    loggedInAt = timers.now();
    await context.client().listSshUsers();
    const firstKey = (await readFile(keyFile, 'utf8')).trim();
    expect(firstKey).not.toBe(KEY);
    // The volume turns unwritable: a folder where the file was (reads and writes both fail).
    await rm(keyFile);
    await mkdir(keyFile);
    await lastRequestsStartRenewal(context.client());
    const ended = await context.finish(0).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(ended).toBeInstanceOf(CredentialError);
    expect((ended as CredentialError).code).toBe('integrator_key_not_persisted');
    expect((ended as Error).message).toContain(keyFile);
    expect((ended as Error).message.split('\n')).toHaveLength(1);
    // The service did rotate: two exchanges, the second answered 200.
    expect(emu.requests().filter((r) => r.path === '/api/v1/oauth2/token').map((r) => r.status)).toEqual([200, 200]);
  });

  it('a renewal that wrote the key back ends the run normally, with the new key in the file', async () => {
    const keyFile = join(dir, 'key');
    context = await oneShotContext(keyFile);
    loggedInAt = timers.now();
    await context.client().listSshUsers();
    const firstKey = (await readFile(keyFile, 'utf8')).trim();
    await lastRequestsStartRenewal(context.client());
    await context.finish(0);
    const lastKey = (await readFile(keyFile, 'utf8')).trim();
    expect(lastKey).not.toBe(firstKey);
    expect(emu.oauth()).toMatchObject({ exchanges: 2 });
    expect(emu.oauth()).toMatchObject({ rejected: 0 });
    expect(emu.requests().filter((r) => r.path === '/api/v1/oauth2/token').map((r) => r.status)).toEqual([200, 200]);
  });
});
