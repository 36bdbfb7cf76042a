import { describe, expect, it } from 'vitest';
import { AdaptiveLimiter } from '../../../src/api/adaptive-limiter.js';
import { createClientEvents } from '../../../src/api/client-events.js';
import { IntegratorKeyProvider } from '../../../src/api/integrator-key-provider.js';
import { RequestExecutor, type Call } from '../../../src/api/request-executor.js';
import { defaultRetryOptions } from '../../../src/api/retry-policy.js';
import { tokenExchangeCall, tokenRoute } from '../../../src/api/token-exchange.js';
import type { WireOutcome, WireRequest } from '../../../src/api/transport.js';
import { VirtualTime } from '../../helpers/virtual-time.js';

/**
 * Issue 27, deliverable 1: an interrupt stops everything not on the wire, the token exchange
 * included. A renewal held by the limiter (a Retry-After pause: the one thing that holds an
 * exchange, which goes ahead of the line and the pace) that every caller left on its stop is
 * never sent; one already on the wire finishes, and its rotated key is still written back.
 */

function rig(options: { ttlSeconds?: number; exchangeStatus?: (n: number) => number } = {}) {
  const time = new VirtualTime();
  const sent: { path: string; at: number }[] = [];
  const keyFile = { content: 'key-0\n' };
  let issued = 0;
  const reply = (status: number, body: unknown): WireOutcome => ({ kind: 'response', status, headers: {}, body: JSON.stringify(body) });
  const transport = {
    send: async (request: WireRequest): Promise<WireOutcome> => {
      sent.push({ path: request.path, at: time.now() });
      await new Promise<void>((resolve) => time.setTimeout(resolve, 50));
      if (request.path !== tokenRoute) return reply(200, {});
      const status = options.exchangeStatus?.(sent.filter((r) => r.path === tokenRoute).length) ?? 200;
      if (status !== 200) return { kind: 'response', status, headers: { 'retry-after': '5' }, body: '{}' };
      issued += 1;
      return reply(200, { access_token: `access-${issued}`, refresh_token: `key-${issued}`, expires_in: options.ttlSeconds ?? 900 });
    },
  };
  const wired: { executor?: RequestExecutor } = {};
  const tokens = new IntegratorKeyProvider(
    { keyFile: '/keys/integrator' },
    {
      exchange: (key, stop) => wired.executor!.run(tokenExchangeCall(key, stop)),
      now: () => time.now(),
      events: createClientEvents(),
      readFile: async () => keyFile.content,
      writeFile: async (_path, text) => {
        keyFile.content = text;
      },
    },
  );
  const limiter = new AdaptiveLimiter({ rate: 1, timers: time });
  const executor = new RequestExecutor({
    target: { url: new URL('http://127.0.0.1:1/') },
    transport,
    limiter,
    tokens,
    events: createClientEvents(),
    timers: time,
    retry: { ...defaultRetryOptions, random: () => 0.5 },
  });
  wired.executor = executor;
  return { time, sent, keyFile, executor, limiter };
}

const create = (stop: AbortSignal): Call<unknown> => ({ method: 'POST', path: '/api/sshusers', route: '/api/sshusers', body: '{}', stop, parse: () => ({ ok: true, value: undefined }) });

describe('an interrupt while the token exchange waits in the limiter', () => {
  it('the exchange every caller left on its stop is never sent; a later run renews', async () => {
    const { time, sent, executor, keyFile, limiter } = rig();
    // The service said Retry-After: 2; the exchange the create needs waits for the pause to end.
    limiter.pause(2_000);
    const stop = new AbortController();
    const pending = executor.run(create(stop.signal)).catch((error: unknown) => error);
    await time.advance(100);
    stop.abort(new Error('interrupted (SIGINT)'));
    expect(await pending).toMatchObject({ code: 'not_sent' });
    await time.advance(5_000);
    expect(sent.map((r) => r.path)).toEqual([]);
    expect(keyFile.content).toBe('key-0\n');

    // The daemon's next run, with a fresh stop, renews.
    const next = executor.run(create(new AbortController().signal));
    await time.advance(5_000);
    await next;
    expect(sent.map((r) => r.path)).toEqual([tokenRoute, '/api/sshusers']);
    expect(keyFile.content).toBe('key-1\n');
  });

  it('an exchange already on the wire when the stop fires finishes, and its rotated key is written back', async () => {
    const { time, sent, executor, keyFile } = rig();
    const stop = new AbortController();
    const pending = executor.run(create(stop.signal)).catch((error: unknown) => error);
    // The exchange went out at once (the slot was free) and is answered 50 ms later.
    await time.advance(10);
    expect(sent.map((r) => r.path)).toEqual([tokenRoute]);
    stop.abort(new Error('interrupted (SIGINT)'));
    expect(await pending).toMatchObject({ code: 'not_sent' });
    await time.advance(5_000);
    expect(sent.map((r) => r.path)).toEqual([tokenRoute]);
    expect(keyFile.content).toBe('key-1\n');
  });

  it('a request waiting in its slot for the renewal of a token too old to send leaves at once, never sent, and the renewal nobody waits for is not repeated', async () => {
    // 2 s tokens at 1 request/s: the second create gets its slot at 2 s, past the token's 1.8 s.
    const { time, sent, executor, keyFile } = rig({ ttlSeconds: 2, exchangeStatus: (n) => (n === 2 ? 503 : 200) });
    const stop = new AbortController();
    const pending = [0, 1, 2].map(() => executor.run(create(stop.signal)).catch((error: unknown) => error));
    await time.advance(2_100);
    // The renewal in the second create's slot was answered 503 with Retry-After: 5.
    expect(sent.map((r) => `${r.path} ${r.at}`)).toEqual([`${tokenRoute} 0`, '/api/sshusers 1000', `${tokenRoute} 2000`]);
    stop.abort(new Error('interrupted (SIGINT)'));
    const results = await Promise.all(pending);
    expect(results[1]).toMatchObject({ code: 'not_sent', attempts: 0 });
    expect(results[2]).toMatchObject({ code: 'not_sent', attempts: 0 });
    await time.advance(10_000);
    expect(sent).toHaveLength(3);
    expect(keyFile.content).toBe('key-1\n');
  });
});
