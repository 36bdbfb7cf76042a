import { describe, expect, it } from 'vitest';
import { AdaptiveLimiter } from '../../../src/api/adaptive-limiter.js';
import { createClientEvents } from '../../../src/api/client-events.js';
import { CredentialError } from '../../../src/api/credential-error.js';
import { IntegratorKeyProvider } from '../../../src/api/integrator-key-provider.js';
import { RequestExecutor, type Call } from '../../../src/api/request-executor.js';
import { defaultRetryOptions } from '../../../src/api/retry-policy.js';
import { tokenExchangeCall, tokenRoute } from '../../../src/api/token-exchange.js';
import { TokenProvider } from '../../../src/api/token-provider.js';
import type { BearerSource } from '../../../src/api/bearer-source.js';
import type { WireOutcome, WireRequest } from '../../../src/api/transport.js';
import type { SecretValue } from '../../../src/model/index.js';
import { Secret } from '../../../src/secrets/secret.js';
import { VirtualTime } from '../../helpers/virtual-time.js';

/**
 * Issue 27, finding 5: when the bearer token is taken and when an access token is renewed, with
 * the real executor, limiter and integrator-key provider against a scripted service in virtual
 * time (no socket: the clock moves only by timers, so every figure is exact). The service
 * checks a token when the request arrives, `latencyMs / 2` after it left.
 */

interface Service {
  readonly transport: { send(request: WireRequest, token: SecretValue | undefined): Promise<WireOutcome> };
  /** Requests that reached the service, with what it answered. */
  readonly log: { path: string; status: number; at: number; token: string | undefined }[];
  /** Holds the answer to the next request to `path` until `release` is called with its status. */
  hold(path: string): { readonly arrived: Promise<void>; release(status: number): void };
}

function scriptedService(time: VirtualTime, options: { ttlSeconds: number; latencyMs: number; rotate: boolean; refuseAll?: boolean }): Service {
  const expiry = new Map<string, number>();
  let refresh = 'key-0';
  let issued = 0;
  const log: Service['log'] = [];
  const holds = new Map<string, { arrived: () => void; status: Promise<number> }>();
  const reply = (status: number, body: unknown = {}): WireOutcome => ({ kind: 'response', status, headers: {}, body: JSON.stringify(body) });
  const answer = async (request: WireRequest, token: string | undefined): Promise<WireOutcome> => {
    const held = holds.get(request.path);
    if (held !== undefined) {
      holds.delete(request.path);
      held.arrived();
      const status = await held.status;
      log.push({ path: request.path, status, at: time.now(), token });
      return reply(status);
    }
    if (request.path === tokenRoute) {
      const sent = (JSON.parse(request.body ?? '{}') as { refresh_token?: string }).refresh_token;
      if (sent !== refresh) return reply(401, { errors: [{ field: 'refresh_token', type: 'invalid' }] });
      issued += 1;
      const access = `access-${issued}`;
      expiry.set(access, time.now() + options.ttlSeconds * 1000);
      if (options.rotate) refresh = `key-${issued}`;
      log.push({ path: request.path, status: 200, at: time.now(), token: undefined });
      return reply(200, { access_token: access, refresh_token: refresh, expires_in: options.ttlSeconds });
    }
    const valid = options.refuseAll !== true && token !== undefined && time.now() < (expiry.get(token) ?? Number.NEGATIVE_INFINITY);
    log.push({ path: request.path, status: valid ? 200 : 401, at: time.now(), token });
    return valid ? reply(200, { id: log.length }) : reply(401);
  };
  const later = (ms: number) => new Promise<void>((resolve) => time.setTimeout(resolve, ms));
  return {
    log,
    transport: {
      async send(request, token) {
        await later(options.latencyMs / 2);
        const outcome = await answer(request, token?.reveal());
        await later(options.latencyMs / 2);
        return outcome;
      },
    },
    hold(path) {
      let arrived!: () => void;
      let release!: (status: number) => void;
      const arrival = new Promise<void>((resolve) => (arrived = resolve));
      holds.set(path, { arrived, status: new Promise<number>((resolve) => (release = resolve)) });
      return { arrived: arrival, release };
    },
  };
}

interface Rig {
  readonly executor: RequestExecutor;
  readonly service: Service;
  readonly time: VirtualTime;
  readonly keyFile: { content: string };
}

function integratorKeyRig(options: { ttlSeconds: number; latencyMs: number; rate: number }): Rig {
  const time = new VirtualTime({ runsByItself: true });
  const service = scriptedService(time, { ...options, rotate: true });
  const events = createClientEvents();
  const keyFile = { content: 'key-0\n' };
  const wired: { executor?: RequestExecutor } = {};
  const tokens = new IntegratorKeyProvider(
    { keyFile: '/keys/integrator' },
    {
      exchange: (key) => wired.executor!.run(tokenExchangeCall(key)),
      now: () => time.now(),
      events,
      readFile: async () => keyFile.content,
      writeFile: async (_path, text) => {
        keyFile.content = text;
      },
    },
  );
  const executor = executorOf(time, service, tokens, options.rate);
  wired.executor = executor;
  return { executor, service, time, keyFile };
}

/** `limiter`: a rate for a new one, or one the test reads. */
function executorOf(time: VirtualTime, service: Pick<Service, 'transport'>, tokens: BearerSource, limiter: number | AdaptiveLimiter): RequestExecutor {
  return new RequestExecutor({
    target: { url: new URL('http://127.0.0.1:1/') },
    transport: service.transport,
    limiter: typeof limiter === 'number' ? new AdaptiveLimiter({ rate: limiter, timers: time }) : limiter,
    tokens,
    events: createClientEvents(),
    timers: time,
    retry: { ...defaultRetryOptions, random: () => 0.5 },
  });
}

function create(i: number): Call<unknown> {
  return { method: 'POST', path: '/api/sshusers', route: '/api/sshusers', body: JSON.stringify({ username: `u${i}` }), parse: () => ({ ok: true, value: undefined }) };
}

const creates = (log: Service['log']) => log.filter((r) => r.path === '/api/sshusers');

describe('access tokens taken as a request goes on the wire', () => {
  it('300 creates at 50/s with 1 s tokens that rotate: no request reaches the service with an expired token', async () => {
    const { executor, service } = integratorKeyRig({ ttlSeconds: 1, latencyMs: 20, rate: 50 });
    const results = await Promise.allSettled(Array.from({ length: 300 }, (_, i) => executor.run(create(i))));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    expect(creates(service.log).filter((r) => r.status === 401)).toEqual([]);
    expect(creates(service.log)).toHaveLength(300);
    // 6 s of writes, a token a second: the first one renewed too, each before it expired.
    const exchanges = service.log.filter((r) => r.path === tokenRoute);
    expect(exchanges.length).toBeGreaterThanOrEqual(6);
    for (let i = 1; i < exchanges.length; i += 1) expect(exchanges[i]!.at - exchanges[i - 1]!.at).toBeLessThan(1000);
  });

  it('a token that grew too old while its request waited is not sent: the request waits for the renewal', async () => {
    // 900 requests at 50/s wait up to 18 s in the queue: fifteen lifetimes of a 1.2 s token.
    const { executor, service } = integratorKeyRig({ ttlSeconds: 1.2, latencyMs: 200, rate: 50 });
    const results = await Promise.allSettled(Array.from({ length: 900 }, (_, i) => executor.run(create(i))));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    expect(creates(service.log).filter((r) => r.status === 401)).toEqual([]);
    expect(creates(service.log)).toHaveLength(900);
  });

  it.each([2, 1, 0.5])('1 s tokens at a pace of %s requests/s (a rate cut towards its floor): no request reaches the service with an expired token', async (rate) => {
    const { executor, service } = integratorKeyRig({ ttlSeconds: 1, latencyMs: 20, rate });
    const results = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => executor.run(create(i))));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    expect(creates(service.log).filter((r) => r.status === 401)).toEqual([]);
    expect(creates(service.log)).toHaveLength(12);
  });

  it('a 401 to a request whose token was renewed since it left is resent with the new token, without another exchange', async () => {
    const { executor, service, time } = integratorKeyRig({ ttlSeconds: 100, latencyMs: 10, rate: 100 });
    const held = service.hold('/api/sshusers');
    const first = executor.run(create(1));
    await held.arrived;
    await time.advance(85_000); // past 80%: the next request renews first
    await executor.run(create(2));
    held.release(401);
    await first;
    const log = service.log.map((r) => `${r.path} ${r.status} ${r.token ?? ''}`.trim());
    expect(log).toEqual([`${tokenRoute} 200`, `${tokenRoute} 200`, '/api/sshusers 200 access-2', '/api/sshusers 401 access-1', '/api/sshusers 200 access-2']);
  });
});

describe('a 401 that stands is a credential error worded for where the token came from', () => {
  const refused = async (tokens: BearerSource): Promise<CredentialError> => {
    const time = new VirtualTime({ runsByItself: true });
    const service = scriptedService(time, { ttlSeconds: 1, latencyMs: 2, rotate: false, refuseAll: true });
    const error = await executorOf(time, service, tokens, 100)
      .run(create(1))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CredentialError);
    return error as CredentialError;
  };

  it('AMSYNC_TOKEN: no token file is spoken of', async () => {
    const error = await refused(new TokenProvider({ token: new Secret('env-token-1') }));
    expect(error).toMatchObject({ code: 'token_rejected', status: 401, attempts: 1, method: 'POST', path: '/api/sshusers' });
    expect(error.message).toBe('POST /api/sshusers: token rejected (401): missing, expired or wrong (AMSYNC_TOKEN)');
  });

  it('a token file: named, and said to have been re-read', async () => {
    const error = await refused(new TokenProvider({ tokenFile: '/run/token' }, async () => 'file-token-1'));
    expect(error.message).toBe('POST /api/sshusers: token rejected (401): missing, expired or wrong (the token file /run/token); the token file was re-read and held no other token');
  });

  it('an integrator key: the access token from the key, renewed and refused again', async () => {
    const time = new VirtualTime({ runsByItself: true });
    const service = scriptedService(time, { ttlSeconds: 100, latencyMs: 2, rotate: false, refuseAll: true });
    const wired: { executor?: RequestExecutor } = {};
    const tokens = new IntegratorKeyProvider({ key: new Secret('key-0') }, { exchange: (key) => wired.executor!.run(tokenExchangeCall(key)), now: () => time.now(), events: createClientEvents() });
    const executor = executorOf(time, service, tokens, 100);
    wired.executor = executor;
    const error = (await executor.run(create(1)).catch((e: unknown) => e)) as CredentialError;
    expect(error).toBeInstanceOf(CredentialError);
    expect(error).toMatchObject({ code: 'token_rejected', status: 401, attempts: 2 });
    expect(error.message).toBe('POST /api/sshusers: token rejected (401): the service refused the access token from the integrator key in AMSYNC_REFRESH_TOKEN, and a renewed one too');
    expect(service.log.map((r) => `${r.path} ${r.status}`)).toEqual([`${tokenRoute} 200`, '/api/sshusers 401', `${tokenRoute} 200`, '/api/sshusers 401']);
  });
});

describe('a credential that cannot be had before a write goes out', () => {
  /** A source whose every token is refused before any request: the key could not be kept. */
  function lostKey(): BearerSource {
    const lost = () => new CredentialError('integrator_key_not_persisted', 'integrator key lost: CANARY-path could not be written');
    return {
      ready: () => Promise.reject(lost()),
      current: () => Promise.reject(lost()),
      refresh: () => Promise.resolve(false),
      describeRejection: () => 'the integrator key',
      rotatable: false,
      knownValues: [],
    } as unknown as BearerSource;
  }

  it('holds a write back as not sent (the report says not started), the credential saying why; a read fails with the credential error itself', async () => {
    const time = new VirtualTime();
    const sent: string[] = [];
    const transport = { send: (request: WireRequest) => (sent.push(`${request.method} ${request.path}`), Promise.resolve<WireOutcome>({ kind: 'response', status: 200, headers: {}, body: '{}' })) };
    const executor = executorOf(time, { transport }, lostKey(), 10);
    const write = await executor.run(create(1)).catch((error: unknown) => error);
    expect(write).toMatchObject({ code: 'not_sent', cause: expect.any(CredentialError) });
    expect((write as Error).message).toContain('integrator key lost');
    const read = await executor.run({ method: 'GET', path: '/api/sshusers', route: '/api/sshusers', parse: () => ({ ok: true, value: undefined }) }).catch((error: unknown) => error);
    expect(read).toBeInstanceOf(CredentialError);
    expect(sent).toEqual([]);
  });
});

describe('an interrupt while a call waits for its token', () => {
  it('the call leaves at once, never sent (not_sent), though the renewal it waited for has not ended', async () => {
    const time = new VirtualTime();
    const sent: string[] = [];
    const transport = { send: (request: WireRequest) => (sent.push(`${request.method} ${request.path}`), Promise.resolve<WireOutcome>({ kind: 'response', status: 200, headers: {}, body: '{}' })) };
    // A renewal that does not end (the token endpoint in its retries): ready() never settles.
    const stuck = {
      ready: () => new Promise<void>(() => undefined),
      current: () => new Promise<never>(() => undefined),
      refresh: () => Promise.resolve(false),
      describeRejection: () => 'the integrator key',
      rotatable: true,
      knownValues: [],
    } as unknown as BearerSource;
    const executor = executorOf(time, { transport }, stuck, 10);
    const stop = new AbortController();
    const pending = executor.run({ ...create(1), stop: stop.signal }).catch((error: unknown) => error);
    await Promise.resolve();
    stop.abort(new Error('interrupted (SIGINT)'));
    const error = await pending;
    expect(error).toMatchObject({ code: 'not_sent' });
    expect(sent).toEqual([]);
  });
});

/** When each attempt of one exchange went out, at 1 request/s, its first `failures` answered `status`. */
async function exchangeAttempts(status: number, failures: number): Promise<number[]> {
  const time = new VirtualTime({ runsByItself: true });
  const attempts: number[] = [];
  let left = failures;
  const transport = {
    send: async (request: WireRequest): Promise<WireOutcome> => {
      attempts.push(time.now());
      if (request.path === tokenRoute && left > 0) {
        left -= 1;
        return { kind: 'response', status, headers: {}, body: '{}' };
      }
      return { kind: 'response', status: 200, headers: {}, body: JSON.stringify({ access_token: 'access-1', expires_in: 60 }) };
    },
  };
  await executorOf(time, { transport }, new TokenProvider({ token: new Secret('t') }), 1).run(tokenExchangeCall('key-0'));
  return attempts;
}

describe('the urgent token exchange retried', () => {
  it('after a 503 its retries keep to the cut pace: only the first attempt goes ahead of the pace', async () => {
    // A server whose bucket is empty: 503 without Retry-After (the service's documentation allows it).
    const attempts = await exchangeAttempts(503, 3);
    expect(attempts).toHaveLength(4);
    // The backoff alone (125, 250, 500 ms) would send three requests within a second at a server
    // that answered 503 at 1 request/s.
    for (let i = 1; i < attempts.length; i += 1) expect(attempts[i]! - attempts[i - 1]!).toBeGreaterThanOrEqual(1000);
  });

  it.each([500, 502, 504])('a retry after %i waits only its backoff: nothing asked the client to slow down, and requests wait in their slots for it', async (status) => {
    // Backoff at random 0.5: 125 ms, then 250 ms; the pace of 1 request/s would space them by a second.
    expect(await exchangeAttempts(status, 2)).toEqual([0, 125, 375]);
  });
});

describe('a renewal answered after its retries', () => {
  it("the access token's life is counted from the attempt that was answered, not from the renewal's first attempt: no second exchange at once", async () => {
    const time = new VirtualTime({ runsByItself: true });
    const log: string[] = [];
    let exchanges = 0;
    const transport = {
      send: async (request: WireRequest): Promise<WireOutcome> => {
        await new Promise<void>((resolve) => time.setTimeout(resolve, 10));
        log.push(`${request.path === tokenRoute ? 'exchange' : 'create'} ${time.now()}`);
        if (request.path !== tokenRoute) return { kind: 'response', status: 200, headers: {}, body: '{}' };
        exchanges += 1;
        // The first attempt waits out a Retry-After of 3 s: longer than the 2 s token it then gets.
        if (exchanges === 1) return { kind: 'response', status: 503, headers: { 'retry-after': '3' }, body: '{}' };
        return { kind: 'response', status: 200, headers: {}, body: JSON.stringify({ access_token: `access-${exchanges}`, expires_in: 2 }) };
      },
    };
    const wired: { executor?: RequestExecutor } = {};
    const tokens = new IntegratorKeyProvider(
      { key: new Secret('key-0') },
      { exchange: (key, stop, onSent) => wired.executor!.run(tokenExchangeCall(key, stop, onSent)), now: () => time.now(), events: createClientEvents() },
    );
    const executor = executorOf(time, { transport }, tokens, 10);
    wired.executor = executor;
    await executor.run(create(1));
    await executor.run(create(2));
    // The answered attempt left at 3.01 s: its 2 s token is fresh, neither create renews it
    // (counted from the first attempt it was born past its sendUntil: one more exchange).
    expect(log).toEqual(['exchange 10', 'exchange 3020', 'create 3138', 'create 3256']);
  });
});

describe('a request that waited in its slot for its token', () => {
  it('measures its round trip from when it went on the wire, not from its slot: the wait for a renewal does not widen the window', async () => {
    const time = new VirtualTime({ runsByItself: true });
    const transport = {
      send: async (): Promise<WireOutcome> => {
        await new Promise<void>((resolve) => time.setTimeout(resolve, 10));
        return { kind: 'response', status: 200, headers: {}, body: '{}' };
      },
    };
    const inner = new TokenProvider({ token: new Secret('t') });
    // Every token is taken after 2 s in the slot, as one renewed there behind a slow exchange.
    const tokens: BearerSource = {
      ready: () => inner.ready(),
      refresh: (generation, method, path, route) => inner.refresh(generation, method, path, route),
      describeRejection: (stage) => inner.describeRejection(stage),
      rotatable: inner.rotatable,
      knownValues: [],
      current: async (method, path, route) => {
        await new Promise<void>((resolve) => time.setTimeout(resolve, 2000));
        return inner.current(method, path, route);
      },
    };
    const limiter = new AdaptiveLimiter({ rate: 10, timers: time });
    const executor = executorOf(time, { transport }, tokens, limiter);
    await Promise.all(Array.from({ length: 20 }, (_, i) => executor.run(create(i))));
    // 10 requests/s at a 10 ms round trip: one request in flight and the two spare.
    expect(limiter.window).toBe(3);
  });
});
