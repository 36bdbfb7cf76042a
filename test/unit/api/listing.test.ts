import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, ListingIncompleteError, type AmClient } from '../../../src/api/index.js';
import { mockClient, service, useStrictHttpMock } from '../../helpers/http-mock.js';

useStrictHttpMock();

const u = (id: number) => ({ id, username: `user-${id}`, level: 'n1', created_at: '2024-01-01T00:00:00Z' });
const k = (id: number) => ({ id, name: `key-${id}`, superuser: false, roles: [{ id: 2, name: 'operator' }], token: `tok-${id}-canary` });
const cursor = (current: unknown, next: unknown, previous: unknown = null) => ({ current, next, previous });

let client: AmClient | undefined;
afterEach(() => {
  client?.close();
  client = undefined;
});

describe('listing follows every next until null, sending back exactly what it got', () => {
  it('starts at cursor=0 with size=pageSize and follows opaque cursors', async () => {
    service()
      .get('/api/sshusers')
      .query({ cursor: '0', size: '2' })
      .reply(200, { cursor: cursor(0, 'opaque+/=token?x'), users: [u(1), u(2)] })
      .get('/api/sshusers')
      .query({ cursor: 'opaque+/=token?x', size: '2' })
      .reply(200, { cursor: cursor('opaque+/=token?x', 17, 0), users: [u(3), u(4)] })
      .get('/api/sshusers')
      .query({ cursor: '17', size: '2' })
      .reply(200, { cursor: cursor(17, null, 'opaque+/=token?x'), users: [u(5)] });
    client = mockClient({ pageSize: 2 });
    const all = await client.listSshUsers();
    expect(all.map((user) => user.id)).toEqual([1, 2, 3, 4, 5]);
  });

  // Issue 17: a large page by default, --page-size being a ceiling; a short page that is not
  // the last shows the service's own largest, which later pages ask for.
  it('asks for 1000 items by default and yields pages one by one', async () => {
    service()
      .get('/api/3rdparty/apikeys')
      .query({ cursor: '0', size: '1000' })
      .reply(200, { cursor: cursor(0, 1), apikeys: [k(1)] })
      .get('/api/3rdparty/apikeys')
      .query({ cursor: '1', size: '1' })
      .reply(200, { cursor: cursor(1, null), apikeys: [] });
    client = mockClient();
    const pages = [];
    for await (const page of client.apikeyPages()) pages.push(page);
    expect(pages.map((page) => [page.index, page.items.length])).toEqual([
      [0, 1],
      [1, 0],
    ]);
    expect(pages[0]!.items[0]).toMatchObject({ id: 1, roles: [2] });
  });

  it('an item seen twice (same id) counts once', async () => {
    service()
      .get('/api/sshusers')
      .query(true)
      .reply(200, { cursor: cursor(0, 1), users: [u(1), u(2)] })
      .get('/api/sshusers')
      .query(true)
      .reply(200, { cursor: cursor(1, null), users: [u(2), u(3)] });
    client = mockClient();
    const pages = [];
    for await (const page of client.sshUserPages()) pages.push(page);
    expect(pages[1]!.duplicates).toBe(1);
    expect(pages.flatMap((page) => page.items.map((user) => user.id))).toEqual([1, 2, 3]);
  });
});

describe('a listing that cannot be completed throws: never a partial result', () => {
  it('a cursor offered twice is a loop', async () => {
    service()
      .get('/api/sshusers')
      .query({ cursor: '0', size: '1000' })
      .reply(200, { cursor: cursor(0, 5), users: [u(1)] })
      .get('/api/sshusers')
      .query({ cursor: '5', size: '1' })
      .reply(200, { cursor: cursor(5, 0), users: [u(2)] });
    client = mockClient();
    const error = await client.listSshUsers().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ListingIncompleteError);
    expect(error).toMatchObject({ code: 'cursor_loop', pagesRead: 2, itemsRead: 2, route: '/api/sshusers' });
  });

  it('a page that still fails after its retries', async () => {
    service()
      .get('/api/sshusers')
      .query({ cursor: '0', size: '1000' })
      .reply(200, { cursor: cursor(0, 1), users: [u(1)] })
      .get('/api/sshusers')
      .query({ cursor: '1', size: '1' })
      .times(3)
      .reply(503);
    client = mockClient({ retry: { maxAttempts: 3 } });
    const error = (await client.listSshUsers().catch((e: unknown) => e)) as ListingIncompleteError;
    expect(error).toBeInstanceOf(ListingIncompleteError);
    expect(error.code).toBe('listing_incomplete');
    expect(error.pagesRead).toBe(1);
    expect(error.cause).toBeInstanceOf(ApiError);
    expect(error.cause).toMatchObject({ code: 'unavailable', attempts: 3 });
  });

  it('a page that fails once is retried and the listing completes', async () => {
    service()
      .get('/api/sshusers')
      .query(true)
      .reply(502)
      .get('/api/sshusers')
      .query(true)
      .reply(200, { cursor: cursor(0, null), users: [u(1)] });
    client = mockClient();
    await expect(client.listSshUsers()).resolves.toHaveLength(1);
  });

  it('a page with malformed JSON', async () => {
    service()
      .get('/api/3rdparty/apikeys')
      .query(true)
      .reply(200, '{"cursor": {"current": 0, "next": null}, "apikeys": [{"id": 1, "token": "tok-malformed-canary"', { 'content-type': 'application/json' });
    client = mockClient();
    const error = (await client.listApikeys().catch((e: unknown) => e)) as ListingIncompleteError;
    expect(error).toBeInstanceOf(ListingIncompleteError);
    expect(error.cause).toMatchObject({ code: 'bad_response' });
    expect(error.message).toContain('not JSON');
    expect(error.message).not.toContain('tok-malformed-canary');
  });

  it('an item that does not parse', async () => {
    service()
      .get('/api/sshusers')
      .query(true)
      .reply(200, { cursor: cursor(0, null), users: [u(1), { id: 'two', username: 'x', level: 'n1' }] });
    client = mockClient();
    const error = (await client.listSshUsers().catch((e: unknown) => e)) as ListingIncompleteError;
    expect(error.cause).toMatchObject({ code: 'bad_response' });
    expect(error.message).toContain('users[1].id');
  });

  it('a page that does not say whether more follow', async () => {
    service()
      .get('/api/sshusers')
      .query(true)
      .reply(200, { cursor: { current: 0 }, users: [u(1)] });
    client = mockClient();
    await expect(client.listSshUsers()).rejects.toMatchObject({ code: 'listing_incomplete', cause: expect.objectContaining({ code: 'bad_response' }) });
  });

  it('a service that hands out new cursors forever is stopped at maxPages', async () => {
    const scope = service();
    for (let page = 0; page < 3; page += 1) {
      scope
        .get('/api/sshusers')
        .query({ cursor: String(page), size: page === 0 ? '1000' : '1' })
        .reply(200, { cursor: cursor(page, page + 1), users: [u(page + 1)] });
    }
    client = mockClient({ maxPages: 3 });
    await expect(client.listSshUsers()).rejects.toMatchObject({ code: 'listing_incomplete', pagesRead: 3 });
  });
});
