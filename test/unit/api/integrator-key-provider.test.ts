import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/api/api-error.js';
import { createClientEvents, type CredentialEvent } from '../../../src/api/client-events.js';
import { CredentialError } from '../../../src/api/credential-error.js';
import { IntegratorKeyProvider, type IntegratorKeyDeps } from '../../../src/api/integrator-key-provider.js';
import type { TokenAnswer } from '../../../src/api/token-exchange.js';
import { Secret } from '../../../src/secrets/secret.js';


/**
 * The integrator key provider against a scripted token endpoint and a clock the test moves:
 * when it renews, how many renewals a crowd of requests causes, what it writes back, and what
 * a rejected key does. No timer is waited on.
 */

interface Harness {
  provider: IntegratorKeyProvider;
  exchanges: string[];
  events: CredentialEvent[];
  writes: { path: string; text: string }[];
  advance(ms: number): void;
  file: { content: string };
}

type Script = (key: string, n: number) => TokenAnswer | Error | Promise<TokenAnswer | Error>;

function rejection(status = 401): ApiError {
  return new ApiError(status === 401 ? 'unauthorized' : 'bad_request', 'POST /api/v1/oauth2/token: refused', {
    method: 'POST',
    path: '/api/v1/oauth2/token',
    route: '/api/v1/oauth2/token',
    status,
    errors: [{ field: 'refresh_token', type: 'invalid', msg: 'the refresh token is not valid' }],
  });
}

function unavailable(): ApiError {
  return new ApiError('unavailable', 'POST /api/v1/oauth2/token: 503', { method: 'POST', path: '/api/v1/oauth2/token', route: '/api/v1/oauth2/token', status: 503 });
}

const answer = (n: number, refresh?: string): TokenAnswer => ({ accessToken: `access-${n}`, refreshToken: refresh, expiresInSeconds: 100 });

function harness(script: Script, options: { file?: string; env?: string; writeFile?: IntegratorKeyDeps['writeFile']; keep?: boolean } = {}): Harness {
  let now = 1_000;
  const exchanges: string[] = [];
  const events: CredentialEvent[] = [];
  const writes: { path: string; text: string }[] = [];
  const file = { content: options.file ?? '' };
  const emitter = createClientEvents();
  emitter.on('credential', (e) => events.push(e));
  const provider = new IntegratorKeyProvider(
    { ...(options.env === undefined ? {} : { key: new Secret(options.env) }), ...(options.file === undefined ? {} : { keyFile: '/keys/integrator' }) },
    {
      now: () => now,
      events: emitter,
      ...(options.keep === undefined ? {} : { keepUnpersistedKey: options.keep }),
      readFile: async () => file.content,
      writeFile:
        options.writeFile ??
        (async (path, text) => {
          writes.push({ path, text });
          file.content = text;
        }),
      exchange: async (key) => {
        exchanges.push(key);
        const result = await script(key, exchanges.length);
        if (result instanceof Error) throw result;
        return result;
      },
    },
  );
  return { provider, exchanges, events, writes, file, advance: (ms) => (now += ms) };
}

const tokenOf = async (p: IntegratorKeyProvider) => {
  await p.ready();
  return (await p.current()).token.reveal();
};

describe('exchange and renewal', () => {
  it('exchanges the key at the first request and renews at 80% of expires_in, not before', async () => {
    const h = harness((_key, n) => answer(n), { file: 'key-A\n' });
    expect(await tokenOf(h.provider)).toBe('access-1');
    expect(h.exchanges).toEqual(['key-A']);
    h.advance(79_999);
    expect(await tokenOf(h.provider)).toBe('access-1');
    h.advance(1);
    expect(await tokenOf(h.provider)).toBe('access-2');
    expect(h.exchanges).toEqual(['key-A', 'key-A']);
    expect(h.events.map((e) => e.action)).toEqual(['exchanged', 'renewed']);
  });

  /** A provider whose second exchange (the first renewal) waits until `release` is called. */
  function renewalHeld(): { h: ReturnType<typeof harness>; release: () => void } {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const h = harness(async (_key, n) => {
      if (n === 2) await gate;
      return answer(n);
    }, { env: 'key-env' });
    return { h, release };
  }

  it('many requests waiting for a renewal cause exactly one exchange', async () => {
    const { h, release } = renewalHeld();
    await h.provider.ready();
    h.advance(90_000);
    const waiting = Array.from({ length: 25 }, () => tokenOf(h.provider));
    release();
    expect(new Set(await Promise.all(waiting))).toEqual(new Set(['access-2']));
    expect(h.exchanges).toHaveLength(2);
  });

  it('a 401 renews once for every request that got it together; a newer token needs no renewal', async () => {
    const h = harness((_key, n) => answer(n), { env: 'key-env' });
    await h.provider.ready();
    const { generation } = await h.provider.current();
    const results = await Promise.all(Array.from({ length: 8 }, () => h.provider.refresh(generation)));
    expect(results).toEqual(Array(8).fill(true));
    expect(h.exchanges).toHaveLength(2);
    expect(await h.provider.refresh(generation)).toBe(true);
    expect(h.exchanges).toHaveLength(2);
  });

  it('as a request goes on the wire past 80%, the renewal starts beside it; the token in hand goes until its last 5 s', async () => {
    const { h, release } = renewalHeld();
    await h.provider.ready();
    // 100 s: sent until its last 5 s (a tenth of its life, at most 5 s).
    expect(await h.provider.current()).toMatchObject({ generation: 1, sendUntil: 1_000 + 95_000 });
    h.advance(85_000);
    // Inside the limiter slot: never waits for the exchange, which starts once however often asked.
    expect((await h.provider.current()).token.reveal()).toBe('access-1');
    expect((await h.provider.current()).token.reveal()).toBe('access-1');
    expect(h.exchanges).toHaveLength(2);
    release();
    await new Promise((r) => setImmediate(r));
    expect((await h.provider.current()).token.reveal()).toBe('access-2');
    expect(h.exchanges).toHaveLength(2);
  });

  it('without expires_in the token is kept until a 401', async () => {
    const h = harness((_key, n) => ({ accessToken: `access-${n}`, refreshToken: undefined, expiresInSeconds: undefined }), { env: 'k' });
    await h.provider.ready();
    h.advance(10 ** 9);
    expect(await tokenOf(h.provider)).toBe('access-1');
    expect(h.exchanges).toHaveLength(1);
  });

  it('a renewal that fails while the token still works keeps it, and is tried again later, not at every request', async () => {
    const h = harness((_key, n) => (n === 2 || n === 3 ? unavailable() : answer(n)), { env: 'k' });
    await h.provider.ready();
    h.advance(80_000);
    expect(await tokenOf(h.provider)).toBe('access-1');
    expect(await tokenOf(h.provider)).toBe('access-1');
    expect(h.exchanges).toHaveLength(2);
    expect(h.events.at(-1)).toEqual({ action: 'renewal_deferred', error: 'unavailable' });
    h.advance(10_000); // 20 s left: the next try comes after half of it
    expect(await tokenOf(h.provider)).toBe('access-1');
    expect(await tokenOf(h.provider)).toBe('access-1');
    expect(h.exchanges).toHaveLength(3);
    h.advance(10_000); // the token has expired: the failure is now the request's
    expect(await tokenOf(h.provider)).toBe('access-4');
    const failing = harness((_key, n) => (n === 1 ? answer(n) : unavailable()), { env: 'k' });
    await failing.provider.ready();
    failing.advance(100_000);
    // Past expiry there is no token to fall back on: the request fails with the renewal's error.
    await expect(failing.provider.ready()).rejects.toBeInstanceOf(ApiError);
  });
});

describe('rotation and write-back', () => {
  it('uses a rotated key from then on and writes it back to its file', async () => {
    const h = harness((key, n) => answer(n, `key-${n + 1}`), { file: 'key-1\n' });
    await h.provider.ready();
    h.advance(80_000);
    await h.provider.ready();
    expect(h.exchanges).toEqual(['key-1', 'key-2']);
    expect(h.writes).toEqual([
      { path: '/keys/integrator', text: 'key-2\n' },
      { path: '/keys/integrator', text: 'key-3\n' },
    ]);
    expect(h.provider.writeBack).toEqual({ ok: true });
    expect(h.events.filter((e) => e.action === 'rotated')).toEqual([
      { action: 'rotated', persisted: true },
      { action: 'rotated', persisted: true },
    ]);
  });

  it('the daemon: a failed write-back keeps the rotated key in use and says so once per failure; a later success clears it', async () => {
    let failWrites = true;
    const h = harness((_key, n) => answer(n, `key-${n + 1}`), {
      keep: true,
      file: 'key-1',
      writeFile: async () => {
        if (failWrites) throw Object.assign(new Error('read-only file system'), { code: 'EROFS' });
      },
    });
    await h.provider.ready();
    expect(h.provider.writeBack).toEqual({ ok: false, error: 'EROFS' });
    expect(h.events).toContainEqual({ action: 'write_back_failed', error: 'EROFS', file: '/keys/integrator', kept: true });
    h.advance(80_000);
    await h.provider.ready();
    // The file still holds key-1 (unchanged from outside): the rotated key-2 is the one used.
    expect(h.exchanges).toEqual(['key-1', 'key-2']);
    failWrites = false;
    h.advance(80_000);
    await h.provider.ready();
    expect(h.provider.writeBack).toEqual({ ok: true });
  });

  // Issue 27 review, fault 2: a service that rotated once and then answers with the same key
  // (or none) never made the daemon write it again, so fixing the volume never made it ready.
  it('the daemon: after a failed write-back, the key in use is written at every renewal until it reaches the file, even without a new rotation', async () => {
    let failWrites = true;
    const written: string[] = [];
    // Rotates at the first exchange only; later answers carry the same key, then none.
    const h = harness((key, n) => answer(n, n === 1 ? 'key-2' : n === 2 ? key : undefined), {
      keep: true,
      file: 'key-1',
      writeFile: async (_path, text) => {
        if (failWrites) throw Object.assign(new Error('read-only file system'), { code: 'EROFS' });
        written.push(text);
      },
    });
    await h.provider.ready();
    expect(h.provider.writeBack).toEqual({ ok: false, error: 'EROFS' });
    failWrites = false; // the volume is fixed
    h.advance(80_000);
    await h.provider.ready();
    expect(h.exchanges).toEqual(['key-1', 'key-2']);
    expect(written).toEqual(['key-2\n']);
    expect(h.provider.writeBack).toEqual({ ok: true });
    expect(h.events).toContainEqual({ action: 'rotated', persisted: true });
    // Written once: with the file in step, a renewal that does not rotate writes nothing.
    h.advance(80_000);
    await h.provider.ready();
    expect(written).toEqual(['key-2\n']);
  });

  it('the daemon: a key from AMSYNC_REFRESH_TOKEN rotates in memory only, and says it is not persisted', async () => {
    const h = harness((_key, n) => answer(n, `key-${n + 1}`), { env: 'key-1', keep: true });
    await h.provider.ready();
    h.advance(80_000);
    await h.provider.ready();
    expect(h.exchanges).toEqual(['key-1', 'key-2']);
    expect(h.events.filter((e) => e.action === 'rotated')).toEqual([
      { action: 'rotated', persisted: false, firstTime: true, kept: true },
      { action: 'rotated', persisted: false, firstTime: false, kept: true },
    ]);
  });

  it('a one-shot run: a rotated key that cannot be written back fails at once, and every request after it, with one exchange', async () => {
    const h = harness((_key, n) => answer(n, `key-${n + 1}`), {
      file: 'key-1',
      writeFile: async () => {
        throw Object.assign(new Error('read-only file system'), { code: 'EROFS' });
      },
    });
    const error = await h.provider.ready().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CredentialError);
    expect(error).toMatchObject({ code: 'integrator_key_not_persisted' });
    expect((error as Error).message).toBe(
      "integrator key lost: the service rotated the key and amsync could not write the new one back to /keys/integrator (EROFS): the key in the file is replaced and stops working. Make the file writable (AMSYNC_REFRESH_TOKEN_FILE / --refresh-token-file: a file in a folder amsync can write), then put a new integrator key from the service's UI in it",
    );
    expect(h.provider.writeBack).toEqual({ ok: false, error: 'EROFS' });
    h.advance(80_000);
    await expect(h.provider.ready()).rejects.toBe(error);
    await expect(h.provider.current()).rejects.toBe(error);
    await expect(h.provider.refresh(1)).rejects.toBe(error);
    expect(h.exchanges).toEqual(['key-1']);
  });

  it('a one-shot run: a key from AMSYNC_REFRESH_TOKEN that the service rotates is lost when the run ends: it fails at once', async () => {
    const h = harness((_key, n) => answer(n, `key-${n + 1}`), { env: 'key-1' });
    const error = await h.provider.ready().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'integrator_key_not_persisted' });
    expect((error as Error).message).toMatch(/^integrator key lost: the service rotated the key from AMSYNC_REFRESH_TOKEN, and an environment variable cannot be written back/);
    expect((error as Error).message).toContain('AMSYNC_REFRESH_TOKEN_FILE');
    expect(h.provider.writeBack).toEqual({ ok: false, error: 'no_key_file' });
    expect(h.exchanges).toHaveLength(1);
  });

  it('a service that does not rotate loses nothing: a key from AMSYNC_REFRESH_TOKEN works for good', async () => {
    const h = harness((key, n) => answer(n, key), { env: 'key-1' });
    await h.provider.ready();
    h.advance(80_000);
    expect(await tokenOf(h.provider)).toBe('access-2');
    expect(h.provider.writeBack).toEqual({ ok: true });
  });

  it('a key file replaced from outside is used at the next renewal', async () => {
    const h = harness((_key, n) => answer(n), { file: 'key-old' });
    await h.provider.ready();
    h.file.content = 'key-new\n';
    h.advance(80_000);
    await h.provider.ready();
    expect(h.exchanges).toEqual(['key-old', 'key-new']);
  });

  it('writes the real file atomically with mode 0600 by default', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'amsync-ik-'));
    try {
      const path = join(dir, 'integrator-key');
      await writeFile(path, 'key-1\n', { mode: 0o644 });
      const emitter = createClientEvents();
      const provider = new IntegratorKeyProvider({ keyFile: path }, { now: () => 0, events: emitter, exchange: async () => answer(1, 'key-2') });
      await provider.ready();
      expect(await readFile(path, 'utf8')).toBe('key-2\n');
      expect((await stat(path)).mode & 0o777).toBe(0o600);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('a rejected key', () => {
  it('is a CredentialError "integrator key rejected: …" that names where the key came from, never the key', async () => {
    const h = harness(() => rejection(401), { file: 'secret-key-value' });
    const error = await h.provider.ready().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CredentialError);
    expect((error as CredentialError).code).toBe('integrator_key_rejected');
    expect((error as Error).message).toMatch(/^integrator key rejected: POST \/api\/v1\/oauth2\/token answered 401: refresh_token invalid \(the refresh token is not valid\); make a new integrator key in the service's UI and put it in \/keys\/integrator$/);
    expect((error as Error).message).not.toContain('secret-key-value');
  });

  it('is never sent again: later requests fail at once, without a request, until the file holds another key', async () => {
    const h = harness((key, n) => (key === 'bad-key' ? rejection(400) : answer(n)), { file: 'bad-key' });
    await expect(h.provider.ready()).rejects.toBeInstanceOf(CredentialError);
    await expect(h.provider.ready()).rejects.toThrow(/integrator key rejected: the service refused it before/);
    await expect(h.provider.ready()).rejects.toBeInstanceOf(CredentialError);
    expect(h.exchanges).toEqual(['bad-key']);
    h.file.content = 'good-key';
    expect(await tokenOf(h.provider)).toMatch(/^access-/);
    expect(h.exchanges).toEqual(['bad-key', 'good-key']);
  });

  it('a revoked key is replaced by the key file at once, within the same renewal', async () => {
    // The in-memory (rotated) key is revoked; the operator has put a new key in the file.
    let revoked = false;
    const h = harness((key, n) => (revoked && key !== 'replacement' ? rejection(401) : answer(n, key === 'replacement' ? undefined : `rot-${n}`)), { file: 'key-1' });
    await h.provider.ready();
    revoked = true;
    h.file.content = 'replacement';
    // The provider wrote rot-1 itself; the operator's write changes the file from outside.
    h.advance(80_000);
    expect(await tokenOf(h.provider)).toBe('access-2');
    expect(h.exchanges).toEqual(['key-1', 'replacement']);
  });

  it('a 401 answered by a rejected key fails with the rejection', async () => {
    let n = 0;
    const h = harness(() => ((n += 1) === 1 ? answer(1) : rejection(401)), { env: 'k' });
    await h.provider.ready();
    await expect(h.provider.refresh((await h.provider.current()).generation)).rejects.toBeInstanceOf(CredentialError);
  });
});

describe('secrets', () => {
  it('knows every key and access token to scrub, bounded over a long run', async () => {
    const h = harness((_key, n) => answer(n, `rotated-key-${n}`), { file: 'first-key' });
    await h.provider.ready();
    expect(h.provider.knownValues).toEqual(expect.arrayContaining(['first-key', 'access-1', 'rotated-key-1']));
    for (let i = 0; i < 200; i += 1) {
      h.advance(80_000);
      await h.provider.ready();
    }
    expect(h.provider.knownValues.length).toBeLessThanOrEqual(64);
    expect(h.provider.knownValues).toEqual(expect.arrayContaining(['access-201', 'rotated-key-201']));
  });
});
