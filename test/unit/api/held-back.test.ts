import { describe, expect, it } from 'vitest';
import { AdaptiveLimiter } from '../../../src/api/adaptive-limiter.js';
import { createClientEvents } from '../../../src/api/client-events.js';
import { RequestExecutor, type Call } from '../../../src/api/request-executor.js';
import { defaultRetryOptions } from '../../../src/api/retry-policy.js';
import { TokenProvider } from '../../../src/api/token-provider.js';
import type { BearerSource } from '../../../src/api/bearer-source.js';
import type { WireOutcome, WireRequest } from '../../../src/api/transport.js';
import { Secret } from '../../../src/secrets/secret.js';
import { VirtualTime } from '../../helpers/virtual-time.js';

const create = (name: string): Call<unknown> => ({
  method: 'POST',
  path: '/api/sshusers',
  route: '/api/sshusers',
  body: JSON.stringify({ username: name }),
  parse: () => ({ ok: true, value: undefined }),
});

describe('the gate in front of the wire (issue 32: stop what has not been sent when the first 503 is read)', () => {
  it('a create let through before a 503 is read, and not yet sent, is held back, queued again and sent exactly once', async () => {
    const time = new VirtualTime({ runsByItself: true });
    const sent: { name: string; at: number }[] = [];
    let refused = false;
    const transport = {
      send: async (request: WireRequest): Promise<WireOutcome> => {
        const name = (JSON.parse(request.body!) as { username: string }).username;
        sent.push({ name, at: time.now() });
        await new Promise<void>((resolve) => time.setTimeout(resolve, 5));
        // The bucket is empty for the first request only: a 503 without Retry-After.
        if (name === 'a' && !refused) {
          refused = true;
          return { kind: 'response', status: 503, headers: {}, body: '' };
        }
        return { kind: 'response', status: 201, headers: {}, body: '{}' };
      },
    };
    // Taking the token for `b` takes 20 ms (a busy process): `b` is let through at 1 ms, and
    // would reach the wire at 21 ms, after the 503 to `a` was read at 5 ms.
    const inner = new TokenProvider({ token: new Secret('token-1') });
    const taken: string[] = [];
    const tokens: BearerSource = {
      ready: () => inner.ready(),
      refresh: (generation, method, path, route) => inner.refresh(generation, method, path, route),
      describeRejection: (stage) => inner.describeRejection(stage),
      rotatable: inner.rotatable,
      get knownValues() {
        return inner.knownValues;
      },
      current: async (method, path, route) => {
        taken.push(`${time.now()}`);
        if (taken.length === 2) await new Promise<void>((resolve) => time.setTimeout(resolve, 20));
        return inner.current(method, path, route);
      },
    };
    const executor = new RequestExecutor({
      target: { url: new URL('http://127.0.0.1:1/') },
      transport,
      limiter: new AdaptiveLimiter({ rate: 1000, timers: time }),
      tokens,
      events: createClientEvents(),
      timers: time,
      retry: { ...defaultRetryOptions, random: () => 0.5 },
    });
    await Promise.all([executor.run(create('a')), executor.run(create('b'))]);
    // `b` went on the wire once, after queuing again (its token taken twice); `a` twice (503, 201).
    expect(sent.filter((s) => s.name === 'b')).toHaveLength(1);
    expect(sent.filter((s) => s.name === 'a')).toHaveLength(2);
    expect(taken).toHaveLength(4);
  });
});
