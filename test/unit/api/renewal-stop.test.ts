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
 * included. A renewal queued behind a slow limiter that every caller left on its stop is never
 * sent; one already on the wire finishes, and its rotated key is still written back.
 */

function rig() {
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
      issued += 1;
      return reply(200, { access_token: `access-${issued}`, refresh_token: `key-${issued}`, expires_in: 900 });
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
  // One request a second: a request just sent holds the next slot a second away.
  const executor = new RequestExecutor({
    target: { url: new URL('http://127.0.0.1:1/') },
    transport,
    limiter: new AdaptiveLimiter({ rate: 1, timers: time }),
    tokens,
    events: createClientEvents(),
    timers: time,
    retry: { ...defaultRetryOptions, random: () => 0.5 },
  });
  wired.executor = executor;
  return { time, sent, keyFile, executor };
}

const unauthenticated: Call<unknown> = { method: 'GET', path: '/api/v1/ping', route: '/api/v1/ping', auth: false, parse: () => ({ ok: true, value: undefined }) };
const create = (stop: AbortSignal): Call<unknown> => ({ method: 'POST', path: '/api/sshusers', route: '/api/sshusers', body: '{}', stop, parse: () => ({ ok: true, value: undefined }) });

describe('an interrupt while the token exchange waits in the limiter', () => {
  it('the exchange every caller left on its stop is never sent; a later run renews', async () => {
    const { time, sent, executor, keyFile } = rig();
    // Takes the limiter's slot: the exchange the create needs waits a second behind it.
    const first = executor.run(unauthenticated);
    const stop = new AbortController();
    const pending = executor.run(create(stop.signal)).catch((error: unknown) => error);
    await time.advance(100);
    stop.abort(new Error('interrupted (SIGINT)'));
    expect(await pending).toMatchObject({ code: 'not_sent' });
    await first;
    await time.advance(5_000);
    expect(sent.map((r) => r.path)).toEqual(['/api/v1/ping']);
    expect(keyFile.content).toBe('key-0\n');

    // The daemon's next run, with a fresh stop, renews.
    const next = executor.run(create(new AbortController().signal));
    await time.advance(5_000);
    await next;
    expect(sent.map((r) => r.path)).toEqual(['/api/v1/ping', tokenRoute, '/api/sshusers']);
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
});
