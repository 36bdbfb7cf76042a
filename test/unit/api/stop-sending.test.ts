import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, type AmClient } from '../../../src/api/index.js';
import { Secret } from '../../../src/secrets/secret.js';
import { mockClient, service, useStrictHttpMock } from '../../helpers/http-mock.js';

/**
 * The client's stop (an interrupt): nothing more is sent, what is on the wire finishes and its
 * answer stands, no retry starts. Strict mocks: a request sent after the stop that no
 * interceptor expects fails the test.
 */
useStrictHttpMock();

const user = (id: number, username: string) => ({ id, username, level: 'n1' });
const newUser = (username: string) => ({ username, level: 'n1', password: new Secret('pw-canary-stop-4471') });

let client: AmClient | undefined;
afterEach(() => {
  client?.close();
  client = undefined;
});

describe('a stop (an interrupt) stops the client short of the wire', () => {
  it('the request on the wire finishes and its answer stands; the calls waiting behind it are never sent (not_sent)', async () => {
    const stop = new AbortController();
    let onWireAtStop = -1;
    // One request at a time: the other four wait in the limiter.
    client = mockClient({ concurrency: 1, rate: 1 });
    const stopping = client.withStop(stop.signal);
    service()
      .post('/api/sshusers')
      .reply(() => {
        // The interrupt comes while this one is at the service.
        stop.abort(new Error('interrupted (SIGINT)'));
        onWireAtStop = client!.onWire();
        return [200, user(1, 'u0')];
      });
    const outcomes = await Promise.allSettled([0, 1, 2, 3, 4].map((i) => stopping.createSshUser(newUser(`u${i}`))));
    expect(onWireAtStop).toBe(1);
    expect(outcomes[0]).toEqual({ status: 'fulfilled', value: expect.objectContaining({ id: 1 }) });
    for (const o of outcomes.slice(1)) {
      expect(o.status).toBe('rejected');
      const error = (o as PromiseRejectedResult).reason as ApiError;
      expect(error).toBeInstanceOf(ApiError);
      expect(error.code).toBe('not_sent');
      expect(error.attempts).toBe(0);
      expect(error.message).toBe('POST /api/sshusers: not sent: interrupted (SIGINT)');
    }
    expect(client.onWire()).toBe(0);
  });

  it('a 503 answered after the stop is not retried: the call fails with the 503, saying why', async () => {
    const stop = new AbortController();
    client = mockClient();
    service()
      .post('/api/sshusers')
      .reply(() => {
        stop.abort(new Error('interrupted (SIGTERM)'));
        return [503, ''];
      });
    const error = (await client
      .withStop(stop.signal)
      .createSshUser(newUser('deploy'))
      .catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.code).toBe('unavailable');
    expect(error.attempts).toBe(1);
    expect(error.message).toBe('POST /api/sshusers: 503 service unavailable; not retried: interrupted (SIGTERM)');
  });

  it('a retry waiting out its backoff when the stop comes is never sent', async () => {
    const stop = new AbortController();
    // A long backoff: the stop comes during it.
    client = mockClient({ retry: { baseDelayMs: 60_000, maxDelayMs: 60_000 } });
    service().get('/api/sshusers/7').reply(503, '', { 'Retry-After': '30' });
    const pending = client.withStop(stop.signal).fetchSshUser(7);
    client.events.on('retry', () => stop.abort(new Error('interrupted (SIGINT)')));
    const error = (await pending.catch((e: unknown) => e)) as ApiError;
    expect(error.code).toBe('unavailable');
    expect(error.message).toContain('not retried: interrupted (SIGINT)');
  });

  it('a call made after the stop sends nothing; the same client without the stop still works', async () => {
    const stop = new AbortController();
    stop.abort(new Error('interrupted (SIGINT)'));
    client = mockClient();
    await expect(client.withStop(stop.signal).fetchSshUser(7)).rejects.toMatchObject({ code: 'not_sent' });
    await expect(client.withStop(stop.signal).listSshUsers()).rejects.toMatchObject({ code: 'listing_incomplete', cause: expect.objectContaining({ code: 'not_sent' }) });
    service().get('/api/sshusers/7').reply(200, user(7, 'deploy'));
    await expect(client.fetchSshUser(7)).resolves.toMatchObject({ id: 7 });
  });

  it('a run signal (the deadline) also takes its queued calls out of the line at once, as cancelled', async () => {
    const deadline = new AbortController();
    client = mockClient({ concurrency: 1, rate: 1 });
    const run = client.withSignal(deadline.signal);
    service()
      .get('/api/sshusers/1')
      .reply(() => {
        deadline.abort();
        return [200, user(1, 'a')];
      });
    const outcomes = await Promise.allSettled([1, 2, 3].map((id) => run.fetchSshUser(id)));
    expect(outcomes.slice(1).map((o) => (o as PromiseRejectedResult).reason?.code)).toEqual(['cancelled', 'cancelled']);
  });
});
