import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, ListingIncompleteError, type AmClient } from '../../../src/api/index.js';
import { mockClient, service, useStrictHttpMock } from '../../helpers/http-mock.js';

useStrictHttpMock();

const u = (id: number) => ({ id, username: `user-${id}`, level: 'n1', created_at: '2024-01-01T00:00:00Z' });
const cursor = (current: unknown, next: unknown) => ({ current, next, previous: null });

let client: AmClient | undefined;
afterEach(() => {
  client?.close();
  client = undefined;
});

const count = (text: string, part: string) => text.split(part).length - 1;

describe('each part of a failure is said once', () => {
  it('a page that fails after one was read: the route once, then what happened', async () => {
    service()
      .get('/api/sshusers')
      .query({ cursor: '0', size: '1000' })
      .reply(200, { cursor: cursor(0, 1), users: [u(1)] })
      .get('/api/sshusers')
      .query({ cursor: '1', size: '1' }) // a short page that is not the last: the service's largest is learned
      .times(2)
      .reply(503);
    client = mockClient({ retry: { maxAttempts: 2 } });
    const error = (await client.listSshUsers().catch((e: unknown) => e)) as ListingIncompleteError;
    expect(error).toBeInstanceOf(ListingIncompleteError);
    expect(error.message).toBe('GET /api/sshusers: listing incomplete after 1 page: 503 service unavailable (gave up after 2 attempts)');
  });

  it('the first page failing: the request and what happened, nothing about pages', async () => {
    service().get('/api/3rdparty/apikeys').query(true).reply(401);
    client = mockClient();
    const error = (await client.listApikeys().catch((e: unknown) => e)) as ListingIncompleteError;
    // Worded for where the token came from (issue 27): this client has AMSYNC_TOKEN, no token file.
    expect(error.message).toBe('GET /api/3rdparty/apikeys: token rejected (401): missing, expired or wrong (AMSYNC_TOKEN)');
    expect(count(error.message, '/api/3rdparty/apikeys')).toBe(1);
  });

  it('the ApiError keeps what happened apart from where, for whoever wraps it', async () => {
    // A fetch answers undefined for a 404 (the item is gone); a delete of a missing item is the error.
    service().delete('/api/sshusers/7').reply(404);
    client = mockClient();
    const error = (await client.deleteSshUser(7).catch((e: unknown) => e)) as ApiError;
    expect(error).toMatchObject({ code: 'not_found', detail: '404 not found', message: 'DELETE /api/sshusers/7: 404 not found', serviceWide: false });
  });
});

describe('a Retry-After longer than the retry budget left fails at once, naming the wait', () => {
  it('150 s asked with 120 s of budget: one attempt, and the message says both', async () => {
    service().post('/api/3rdparty/apikeys').reply(503, '', { 'Retry-After': '150' });
    client = mockClient({ retry: { maxElapsedMs: 120_000 } });
    const error = (await client.createApikey({ name: 'k' }).catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'unavailable', attempts: 1, status: 503 });
    expect(error.message).toBe(
      'POST /api/3rdparty/apikeys: 503 service unavailable: the service asked to wait 150 s (Retry-After), more than the 120 s retry budget left (retry.maxElapsedMs)',
    );
  });
});
