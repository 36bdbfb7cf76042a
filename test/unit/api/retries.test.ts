import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, type AmClient, type RetryEvent, type ThrottleEvent } from '../../../src/api/index.js';
import { Secret } from '../../../src/secrets/secret.js';
import { mockClient, service, useStrictHttpMock } from '../../helpers/http-mock.js';
import { VirtualTime } from '../../helpers/virtual-time.js';

useStrictHttpMock();

const user = { id: 7, username: 'deploy', level: 'n1' };
// nock 14 needs real Error objects to emit them as request errors.
const reset = () => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
const newUser = () => ({ username: 'deploy', level: 'n1', password: new Secret('pw-canary-31337') });

let client: AmClient | undefined;
afterEach(() => {
  client?.close();
  client = undefined;
});

function record(c: AmClient): { retries: RetryEvent[]; throttles: ThrottleEvent[] } {
  const retries: RetryEvent[] = [];
  const throttles: ThrottleEvent[] = [];
  c.events.on('retry', (event) => retries.push(event));
  c.events.on('throttle', (event) => throttles.push(event));
  return { retries, throttles };
}

describe('Retry-After is honoured in both forms and pauses the whole limiter', () => {
  // The waits pass in virtual time: the client's clock is the test's.
  it('delay-seconds: waits that long and pauses the limiter', async () => {
    service().get('/api/sshusers/7').reply(503, '', { 'Retry-After': '1' }).get('/api/sshusers/7').reply(200, user);
    const time = new VirtualTime({ runsByItself: true });
    client = mockClient({ timers: time });
    const { retries, throttles } = record(client);
    await expect(client.fetchSshUser(7)).resolves.toMatchObject({ id: 7 });
    expect(time.now()).toBeGreaterThanOrEqual(1000);
    expect(retries).toEqual([expect.objectContaining({ attempt: 1, delayMs: 1000, source: 'retry_after', reason: 'unavailable', status: 503 })]);
    expect(throttles).toEqual([expect.objectContaining({ status: 503, pauseMs: 1000, decreased: true })]);
    expect(throttles[0]!.rate).toBeLessThan(throttles[0]!.previousRate);
  });

  it('HTTP-date: waits until then', async () => {
    const time = new VirtualTime({ runsByItself: true });
    const at = new Date(time.wallNow() + 2000).toUTCString();
    service().get('/api/sshusers/7').reply(429, '', { 'Retry-After': at }).get('/api/sshusers/7').reply(200, user);
    client = mockClient({ timers: time });
    const { retries, throttles } = record(client);
    await client.fetchSshUser(7);
    // Second resolution of the date: between 1 and 2 seconds from the answer.
    expect(retries[0]).toMatchObject({ source: 'retry_after', reason: 'rate_limited', status: 429 });
    expect(retries[0]!.delayMs).toBeGreaterThan(0);
    expect(retries[0]!.delayMs).toBeLessThanOrEqual(2000);
    expect(throttles[0]!.pauseMs).toBe(retries[0]!.delayMs);
  });

  it('a Retry-After beyond five minutes is cut to five minutes', async () => {
    service().get('/api/sshusers/7').reply(503, '', { 'Retry-After': '86400' });
    // The elapsed budget refuses to wait that long at all: the call fails at once, without a
    // second attempt, instead of hanging for a day.
    client = mockClient({ retry: { maxElapsedMs: 60_000 } });
    const { throttles } = record(client);
    await expect(client.fetchSshUser(7)).rejects.toMatchObject({ code: 'unavailable', attempts: 1 });
    expect(throttles[0]!.pauseMs).toBe(300_000);
  });
});

describe('503 and 429 are retried for every method, with backoff, up to a bound', () => {
  it('retries a POST on 503 (the service did not take it)', async () => {
    service().post('/api/sshusers').reply(503).post('/api/sshusers').reply(200, user);
    client = mockClient();
    await expect(client.createSshUser(newUser())).resolves.toMatchObject({ id: 7 });
  });

  it('a 503 storm ends with unavailable after maxAttempts, and the rate comes down', async () => {
    service().get('/api/sshusers/7').times(4).reply(503);
    client = mockClient({ retry: { maxAttempts: 4 } });
    const { retries } = record(client);
    const before = client.limiter.rate;
    const error = (await client.fetchSshUser(7).catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'unavailable', status: 503, attempts: 4 });
    expect(error.message).toContain('gave up after 4 attempts');
    expect(retries.map((r) => r.source)).toEqual(['backoff', 'backoff', 'backoff']);
    expect(client.limiter.rate).toBeLessThan(before);
  });

  it('backs off exponentially with full jitter', async () => {
    service().get('/api/sshusers/7').times(4).reply(503).get('/api/sshusers/7').reply(200, user);
    client = mockClient({ random: () => 0.5, retry: { baseDelayMs: 4, maxDelayMs: 1000 } });
    const { retries } = record(client);
    await client.fetchSshUser(7);
    expect(retries.map((r) => r.delayMs)).toEqual([2, 4, 8, 16]);
  });

  it('429 ends as rate_limited', async () => {
    service().delete('/api/sshusers/7').times(2).reply(429);
    client = mockClient({ retry: { maxAttempts: 2 } });
    await expect(client.deleteSshUser(7)).rejects.toMatchObject({ code: 'rate_limited', status: 429 });
  });

});

describe('500, 502, 504, timeouts and resets are retried only when repeating is safe', () => {
  it.each([500, 502, 504])('retries GET on %i', async (status) => {
    service().get('/api/sshusers/7').reply(status).get('/api/sshusers/7').reply(200, user);
    client = mockClient();
    await expect(client.fetchSshUser(7)).resolves.toMatchObject({ id: 7 });
  });

  it.each([500, 502, 504])('retries PUT on %i', async (status) => {
    service().put('/api/sshusers/7').reply(status).put('/api/sshusers/7').reply(200, user);
    client = mockClient();
    await expect(client.updateSshUser(7, { level: 'n1' })).resolves.toMatchObject({ id: 7 });
  });

  it('retries DELETE on a reset', async () => {
    service().delete('/api/sshusers/7').replyWithError(reset()).delete('/api/sshusers/7').reply(200, {});
    client = mockClient();
    await expect(client.deleteSshUser(7)).resolves.toBeUndefined();
  });

  it('retries GET after a timeout', async () => {
    service().get('/api/sshusers/7').delay(500).reply(200, user).get('/api/sshusers/7').reply(200, user);
    client = mockClient({ timeoutMs: 100 });
    const { retries } = record(client);
    await expect(client.fetchSshUser(7)).resolves.toMatchObject({ id: 7 });
    expect(retries[0]).toMatchObject({ reason: 'timeout', status: undefined });
  });

  it('a GET that keeps timing out ends as timeout', async () => {
    service().get('/api/sshusers/7').times(2).delay(500).reply(200, user);
    client = mockClient({ timeoutMs: 100, retry: { maxAttempts: 2 } });
    await expect(client.fetchSshUser(7)).rejects.toMatchObject({ code: 'timeout', attempts: 2 });
  });

  it('does not retry a POST on 500: it fails as server_error', async () => {
    service().post('/api/sshusers').reply(500, 'oops');
    client = mockClient();
    await expect(client.createSshUser(newUser())).rejects.toMatchObject({ code: 'server_error', status: 500, attempts: 1 });
  });
});

describe('a POST whose outcome is unknown is never repeated: unknown_outcome, exactly one POST', () => {
  it.each([502, 504])('%i', async (status) => {
    service().post('/api/sshusers').once().reply(status);
    client = mockClient();
    const error = (await client.createSshUser(newUser()).catch((e: unknown) => e)) as ApiError;
    expect(error).toMatchObject({ code: 'unknown_outcome', status, attempts: 1 });
    expect(error.message).toContain('look the item up');
  });

  it('a reset after sending', async () => {
    service().post('/api/sshusers').once().replyWithError(reset());
    client = mockClient();
    await expect(client.createSshUser(newUser())).rejects.toMatchObject({ code: 'unknown_outcome', attempts: 1 });
  });

  it('a lost response (timeout)', async () => {
    service().post('/api/3rdparty/apikeys').once().delay(500).reply(200, { id: 1, name: 'k', superuser: false, roles: [], token: 't' });
    client = mockClient({ timeoutMs: 100 });
    await expect(client.createApikey({ name: 'k' })).rejects.toMatchObject({ code: 'unknown_outcome', attempts: 1 });
  });

  it('but a POST refused before it was sent is retried', async () => {
    service()
      .post('/api/sshusers')
      .replyWithError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }))
      .post('/api/sshusers')
      .reply(200, user);
    client = mockClient();
    await expect(client.createSshUser(newUser())).resolves.toMatchObject({ id: 7 });
  });

  it('a network error carries a sanitised cause with its code', async () => {
    service().get('/api/sshusers/7').times(2).replyWithError(reset());
    client = mockClient({ retry: { maxAttempts: 2 } });
    const error = (await client.fetchSshUser(7).catch((e: unknown) => e)) as ApiError;
    expect(error.code).toBe('network');
    expect(error.cause).toMatchObject({ code: 'ECONNRESET' });
    expect(Object.keys(error.cause as object)).not.toContain('options');
  });
});
