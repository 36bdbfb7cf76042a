import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { defaultFaultSettings, startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { call, errorsOf, eventually, EXPIRED_TOKEN, listAll, RO_TOKEN, RW_TOKEN, type RawResponse } from '../helpers/emulator-client.js';

/**
 * The contract of api-spec.md (every row of the endpoint and error tables) and DESIGN.md §1,
 * checked over real HTTP against the emulator, plus its control API and faults.
 */

const USERS = '/api/sshusers';
const KEYS = '/api/3rdparty/apikeys';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

let emu: RunningEmulator;

beforeAll(async () => {
  emu = await startEmulator({ tokens: [RW_TOKEN], readOnlyTokens: [RO_TOKEN], expiredTokens: [EXPIRED_TOKEN], seed: 1234 });
});

afterAll(async () => {
  await emu.close();
});

beforeEach(() => {
  emu.setFaults({ ...defaultFaultSettings, rules: [] });
  emu.reset();
  emu.clearRequests();
});

const get = (path: string, token?: string | null) => call(emu.url, 'GET', path, { token });
const post = (path: string, body: unknown, token?: string | null) => call(emu.url, 'POST', path, { body, token });
const put = (path: string, body: unknown, token?: string | null) => call(emu.url, 'PUT', path, { body, token });
const del = (path: string, token?: string | null) => call(emu.url, 'DELETE', path, { token });

function expectJson(res: RawResponse): void {
  expect(res.headers['content-type']).toBe('application/json');
  expect(res.json).toBeDefined();
}

async function createUser(username: string, password = 'pw-1'): Promise<{ id: number; username: string }> {
  const res = await post(USERS, { username, level: 'n1', password });
  expect(res.status).toBe(200);
  return res.json as { id: number; username: string };
}

async function createKey(body: Record<string, unknown>): Promise<{ id: number; token: string }> {
  const res = await post(KEYS, body);
  expect(res.status).toBe(200);
  return res.json as { id: number; token: string };
}

describe('SSH users endpoints', () => {
  it('List: GET /api/sshusers answers a cursor object and users', async () => {
    await createUser('alice');
    const res = await get(`${USERS}?cursor=0`);
    expect(res.status).toBe(200);
    expectJson(res);
    expect(res.json).toEqual({
      cursor: { current: 0, next: null, previous: null },
      users: [{ id: 1, username: 'alice', level: 'n1', created_at: expect.stringMatching(ISO), updated_at: expect.stringMatching(ISO) }],
    });
  });

  it('List without cursor or size gives the first page of 25', async () => {
    emu.seed({ count: { sshUsers: 30 } });
    const res = await get(USERS);
    const body = res.json as { cursor: { current: number; next: number | null }; users: unknown[] };
    expect(body.users).toHaveLength(25);
    expect(body.cursor.current).toBe(0);
    expect(body.cursor.next).not.toBeNull();
  });

  it('Fetch: GET /api/sshusers/{id} answers the user without a password', async () => {
    const { id } = await createUser('bob', 'hunter2');
    const res = await get(`${USERS}/${id}`);
    expect(res.status).toBe(200);
    expectJson(res);
    expect(res.json).toEqual({ id, username: 'bob', level: 'n1', created_at: expect.stringMatching(ISO), updated_at: expect.stringMatching(ISO) });
    expect(res.text).not.toContain('hunter2');
    expect(res.text).not.toContain('password');
  });

  it('Create: POST /api/sshusers answers the new user with a service-assigned id', async () => {
    const res = await post(USERS, { username: 'carol', level: 'n1', password: 's3cret', id: 777 });
    expect(res.status).toBe(200);
    expectJson(res);
    expect(res.json).toMatchObject({ id: 1, username: 'carol', level: 'n1' });
    expect(res.text).not.toContain('s3cret');
    expect(await (await post(USERS, { username: 'dave', level: 'n1', password: 'x' })).json).toMatchObject({ id: 2 });
  });

  it('Update: PUT /api/sshusers/{id} changes only the fields sent', async () => {
    const { id } = await createUser('erin', 'old');
    const res = await put(`${USERS}/${id}`, { password: 'new' });
    expect(res.status).toBe(200);
    expectJson(res);
    expect(res.json).toMatchObject({ id, username: 'erin', level: 'n1' });
    expect(res.text).not.toContain('new"');
    const check = await call(emu.url, 'POST', '/_emulator/check-password', { body: { username: 'erin', password: 'new' }, token: null });
    expect(check.json).toEqual({ match: true });
    const renamed = await put(`${USERS}/${id}`, { username: 'erin2', level: 'n1' });
    expect(renamed.json).toMatchObject({ id, username: 'erin2', level: 'n1' });
    expect((await get(`${USERS}/${id}`)).json).toMatchObject({ username: 'erin2' });
  });

  it('Delete: DELETE /api/sshusers/{id} answers 200 JSON; the user is gone', async () => {
    const { id } = await createUser('frank');
    const res = await del(`${USERS}/${id}`);
    expect(res.status).toBe(200);
    expectJson(res);
    expect((await get(`${USERS}/${id}`)).status).toBe(404);
    expect((await del(`${USERS}/${id}`)).status).toBe(404);
  });
});

describe('HEAD', () => {
  it('answers like GET without a body', async () => {
    await createUser('head');
    const res = await call(emu.url, 'HEAD', USERS);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.text).toBe('');
  });
});

describe('apikeys endpoints', () => {
  it('List: GET /api/3rdparty/apikeys answers a cursor object and apikeys with tokens', async () => {
    const created = await createKey({ name: 'billing', roles: [3] });
    const res = await get(`${KEYS}?cursor=0&size=10`);
    expect(res.status).toBe(200);
    expectJson(res);
    expect(res.json).toEqual({
      cursor: { current: 0, next: null, previous: null },
      apikeys: [
        {
          id: created.id,
          name: 'billing',
          superuser: false,
          roles: [{ id: 3, name: 'auditor' }],
          token: created.token,
          created_at: expect.stringMatching(ISO),
          updated_at: expect.stringMatching(ISO),
        },
      ],
    });
  });

  it('Fetch: GET /api/3rdparty/apikeys/{id} answers the key with its token', async () => {
    const created = await createKey({ name: 'monitor', superuser: true });
    const res = await get(`${KEYS}/${created.id}`);
    expect(res.status).toBe(200);
    expectJson(res);
    expect(res.json).toMatchObject({ id: created.id, name: 'monitor', superuser: true, roles: [], token: created.token });
  });

  it('Create: POST /api/3rdparty/apikeys defaults superuser to false and answers id and a random token', async () => {
    const a = await post(KEYS, { name: 'a' });
    const b = await post(KEYS, { name: 'a', roles: [] });
    expect(a.status).toBe(200);
    expectJson(a);
    const ka = a.json as { id: number; superuser: boolean; roles: unknown[]; token: string };
    const kb = b.json as { id: number; token: string };
    expect(ka).toMatchObject({ id: 1, superuser: false, roles: [] });
    expect(ka.token.length).toBeGreaterThanOrEqual(20);
    expect(kb.id).toBe(2);
    expect(kb.token).not.toBe(ka.token);
  });

  it('apikey names are not unique: a second key with one name is created', async () => {
    await createKey({ name: 'twin' });
    await createKey({ name: 'twin' });
    const list = (await get(KEYS)).json as { apikeys: { name: string }[] };
    expect(list.apikeys.map((k) => k.name)).toEqual(['twin', 'twin']);
  });

  it('Update: PUT /api/3rdparty/apikeys/{id} answers roles as Role objects and keeps the rest', async () => {
    const created = await createKey({ name: 'ops', roles: [1] });
    const res = await put(`${KEYS}/${created.id}`, { roles: [2, 4] });
    expect(res.status).toBe(200);
    expectJson(res);
    expect(res.json).toMatchObject({
      id: created.id,
      name: 'ops',
      superuser: false,
      roles: [
        { id: 2, name: 'operator' },
        { id: 4, name: 'admin' },
      ],
      token: created.token,
    });
    expect(((await put(`${KEYS}/${created.id}`, { superuser: true, name: 'ops2' })).json as { roles: unknown[] }).roles).toHaveLength(2);
  });

  it('Delete: DELETE /api/3rdparty/apikeys/{id} answers 200 JSON; the key is gone', async () => {
    const created = await createKey({ name: 'tmp' });
    const res = await del(`${KEYS}/${created.id}`);
    expect(res.status).toBe(200);
    expectJson(res);
    expect((await get(`${KEYS}/${created.id}`)).status).toBe(404);
  });

  it('GET /api/roles lists the roles with their scopes, paged like the other lists', async () => {
    const res = await get('/api/roles?cursor=0&size=');
    expect(res.status).toBe(200);
    expectJson(res);
    const body = res.json as { cursor: unknown; roles: { id: number; name: string; scopes: unknown[] }[] };
    expect(body.cursor).toEqual({ current: 0, next: null, previous: null });
    expect(body.roles.map((r) => [r.id, r.name])).toEqual([
      [1, 'viewer'],
      [2, 'operator'],
      [3, 'auditor'],
      [4, 'admin'],
    ]);
    for (const role of body.roles) {
      expect(role).toEqual({ id: role.id, name: role.name, scopes: expect.any(Array), created_at: expect.stringMatching(ISO), updated_at: expect.stringMatching(ISO) });
      expect(role.scopes.length).toBeGreaterThan(0);
      for (const scope of role.scopes) expect(scope).toEqual({ name: expect.any(String), read: expect.any(Boolean), write: expect.any(Boolean) });
    }
    // The default roles are plausible: only admin may write apikeys.
    const writers = body.roles.filter((r) => (r.scopes as { name: string; write: boolean }[]).some((s) => s.name === 'apikeys' && s.write));
    expect(writers.map((r) => r.name)).toEqual(['admin']);
  });

  it('GET /api/roles follows cursors in small pages and refuses a cursor of another list', async () => {
    const pages = await listAll(emu.url, '/api/roles', 'roles', 3);
    expect(pages.map((p) => p.items.map((r) => r.id))).toEqual([[1, 2, 3], [4]]);
    expect(pages[0]!.cursor.next).not.toBe(0);
    emu.seed({ count: { sshUsers: 10 } });
    const userCursor = ((await get(`${USERS}?cursor=0&size=3`)).json as { cursor: { next: number } }).cursor.next;
    expect((await get(`/api/roles?cursor=${userCursor}`)).status).toBe(400);
  });

  it('PUT with "roles": [] clears the roles of an apikey (the vendor client sends it)', async () => {
    const created = await createKey({ name: 'clear-me', roles: [1, 3] });
    const res = await put(`${KEYS}/${created.id}`, { roles: [] });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ id: created.id, roles: [] });
    expect(((await get(`${KEYS}/${created.id}`)).json as { roles: unknown[] }).roles).toEqual([]);
    expect(emu.state().apikeys[0]!.roles).toEqual([]);
  });
});

/**
 * How the vendor's public Python client lists: it always sends `cursor` and `size`, leaving
 * `size` empty unless its caller chose one, and follows pages while `next` is truthy (so a
 * `next` of 0 would end its listing early).
 */
async function listLikeVendorClient(path: string, key: string, maxPages = 1000): Promise<{ items: Record<string, unknown>[]; pages: number }> {
  const items: Record<string, unknown>[] = [];
  let cursor: unknown = 0;
  let pages = 0;
  for (;;) {
    if (pages >= maxPages) throw new Error(`more than ${maxPages} pages`);
    const res = await get(`${path}?cursor=${String(cursor)}&size=`);
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${res.text}`);
    const body = res.json as Record<string, unknown> & { cursor: { next: unknown } };
    items.push(...(body[key] as Record<string, unknown>[]));
    pages += 1;
    if (!body.cursor.next) return { items, pages };
    cursor = body.cursor.next;
  }
}

const JWT = /^eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

describe("the vendor's client: empty size, next followed while truthy", () => {
  it('an empty size means the server default (25) on every list', async () => {
    emu.seed({ count: { sshUsers: 30, apikeys: 30 } });
    for (const [path, key] of [[USERS, 'users'], [KEYS, 'apikeys'], ['/api/roles', 'roles']] as const) {
      const res = await get(`${path}?cursor=0&size=`);
      expect(res.status, path).toBe(200);
      expect((res.json as Record<string, unknown[]>)[key]!.length, path).toBe(key === 'roles' ? 4 : 25);
    }
  });

  it('lists every kind completely, each item once, with timestamps; apikey tokens are JWTs', async () => {
    // More than two default pages of each, so at least two `next` values are followed.
    emu.seed({ count: { sshUsers: 60, apikeys: 55 }, apikeys: [{ name: 'with-roles', roles: [1, 4] }] });
    const users = await listLikeVendorClient(USERS, 'users');
    const keys = await listLikeVendorClient(KEYS, 'apikeys');
    const roles = await listLikeVendorClient('/api/roles', 'roles');
    expect(users.pages).toBe(3);
    expect(keys.pages).toBe(3);
    expect(new Set(users.items.map((u) => u.id)).size).toBe(60);
    expect(users.items).toHaveLength(60);
    expect(new Set(keys.items.map((k) => k.id)).size).toBe(56);
    expect(keys.items).toHaveLength(56);
    expect(roles.items.map((r) => r.name)).toEqual(['viewer', 'operator', 'auditor', 'admin']);
    for (const item of [...users.items, ...keys.items, ...roles.items]) {
      expect(item.created_at).toMatch(ISO);
      expect(item.updated_at).toMatch(ISO);
    }
    for (const key of keys.items) expect(key.token).toMatch(JWT);
    // Every `next` the listings handed out was truthy until the last page's null.
    const nexts = emu.requests().map((r) => r.next);
    expect(nexts.filter((n) => n === null)).toHaveLength(3);
    expect(nexts.filter((n) => n !== null).every((n) => typeof n === 'number' && n > 0)).toBe(true);
  });

  it('created and updated apikeys carry JWT-shaped, distinct tokens and ISO timestamps', async () => {
    const a = (await post(KEYS, { name: 'a' })).json as { token: string; created_at: string; updated_at: string };
    const b = (await post(KEYS, { name: 'b' })).json as { token: string };
    expect(a.token).toMatch(JWT);
    expect(b.token).toMatch(JWT);
    expect(a.token).not.toBe(b.token);
    const [header, payload] = a.token.split('.') as [string, string];
    expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(JSON.parse(Buffer.from(payload, 'base64url').toString())).toMatchObject({ sub: 'apikey' });
    expect(a.created_at).toMatch(ISO);
    expect(a.updated_at).toMatch(ISO);
  });
});

describe('pagination', () => {
  it('250 users in pages of 7: every user exactly once, previous/next null at the ends', async () => {
    emu.seed({ count: { sshUsers: 250 } });
    const pages = await listAll(emu.url, USERS, 'users', 7);
    expect(pages).toHaveLength(36);
    const ids = pages.flatMap((p) => p.items.map((i) => i.id));
    expect(ids).toHaveLength(250);
    expect(new Set(ids).size).toBe(250);
    expect(pages[0]!.cursor.previous).toBeNull();
    expect(pages[0]!.cursor.current).toBe(0);
    expect(pages.at(-1)!.cursor.next).toBeNull();
    for (const [i, p] of pages.entries()) {
      if (i > 0) expect(p.cursor.previous).toBe(pages[i - 1]!.cursor.current);
      expect(Number.isInteger(p.cursor.current)).toBe(true);
    }
  });

  it('apikeys page the same way', async () => {
    emu.seed({ count: { apikeys: 120 } });
    const pages = await listAll(emu.url, KEYS, 'apikeys', 50);
    expect(pages.map((p) => p.items.length)).toEqual([50, 50, 20]);
  });

  it('cursors are neither offsets nor page numbers', async () => {
    emu.seed({ count: { sshUsers: 40 } });
    const pages = await listAll(emu.url, USERS, 'users', 10);
    const nexts = pages.slice(0, -1).map((p) => p.cursor.next!);
    for (const [i, c] of nexts.entries()) {
      expect([i + 1, i + 2, (i + 1) * 10, (i + 1) * 10 + 1]).not.toContain(c);
    }
  });

  it('sizes above the maximum are clamped to 100', async () => {
    emu.seed({ count: { sshUsers: 150 } });
    const res = await get(`${USERS}?cursor=0&size=500`);
    expect(res.status).toBe(200);
    expect((res.json as { users: unknown[] }).users).toHaveLength(100);
  });

  it('a cursor the service did not hand out, or a non-integer one, answers 400', async () => {
    emu.seed({ count: { sshUsers: 30 } });
    for (const cursor of ['25', '2', 'abc', '-1', '1.5', '']) {
      const res = await get(`${USERS}?cursor=${cursor}`);
      expect(res.status, `cursor=${cursor}`).toBe(400);
      expect(errorsOf(res)[0]).toMatchObject({ field: 'cursor', type: 'invalid' });
    }
    for (const size of ['0', 'x', '-3']) {
      const res = await get(`${USERS}?size=${size}`);
      expect(res.status, `size=${size}`).toBe(400);
      expect(errorsOf(res)[0]).toMatchObject({ field: 'size', type: 'invalid' });
    }
  });
});

describe('authentication and permissions (401, 403)', () => {
  it('no token, an unknown token or another scheme answers 401', async () => {
    for (const res of [
      await get(USERS, null),
      await get(USERS, 'nope'),
      await call(emu.url, 'GET', USERS, { token: null, headers: { Authorization: `Basic ${RW_TOKEN}` } }),
    ]) {
      expect(res.status).toBe(401);
      expectJson(res);
      expect(errorsOf(res)[0]!.field).toBe('authorization');
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    }
  });

  it('an expired token answers 401 saying so', async () => {
    const res = await get(KEYS, EXPIRED_TOKEN);
    expect(res.status).toBe(401);
    expect(errorsOf(res)[0]!.msg).toMatch(/expired/);
    expect(res.headers['www-authenticate']).toContain('invalid_token');
  });

  it('a read-only token reads but every write answers 403', async () => {
    const user = await createUser('ro-target');
    const key = await createKey({ name: 'ro-key' });
    expect((await get(USERS, RO_TOKEN)).status).toBe(200);
    expect((await get(`${KEYS}/${key.id}`, RO_TOKEN)).status).toBe(200);
    const writes = [
      await post(USERS, { username: 'x', level: 'n1', password: 'p' }, RO_TOKEN),
      await put(`${USERS}/${user.id}`, { level: 'n1' }, RO_TOKEN),
      await del(`${USERS}/${user.id}`, RO_TOKEN),
      await post(KEYS, { name: 'x' }, RO_TOKEN),
      await put(`${KEYS}/${key.id}`, { name: 'y' }, RO_TOKEN),
      await del(`${KEYS}/${key.id}`, RO_TOKEN),
    ];
    for (const res of writes) {
      expect(res.status).toBe(403);
      expect(errorsOf(res)[0]).toMatchObject({ field: 'authorization', type: 'rule' });
    }
    expect(emu.state().sshUsers).toHaveLength(1);
    expect(emu.state().apikeys.map((k) => k.name)).toEqual(['ro-key']);
  });
});

describe('validation (400)', () => {
  it('malformed JSON answers 400', async () => {
    for (const [path, method] of [
      [USERS, 'POST'],
      [KEYS, 'POST'],
    ] as const) {
      const res = await call(emu.url, method, path, { body: '{"username": "x",' });
      expect(res.status).toBe(400);
      expect(errorsOf(res)[0]).toMatchObject({ field: 'body', type: 'invalid' });
    }
    const { id } = await createUser('m');
    expect((await call(emu.url, 'PUT', `${USERS}/${id}`, { body: 'not json' })).status).toBe(400);
  });

  it('missing required SSH user fields answer 400 required, one entry per field', async () => {
    const res = await post(USERS, {});
    expect(res.status).toBe(400);
    expect(errorsOf(res).map((e) => [e.field, e.type])).toEqual([
      ['username', 'required'],
      ['level', 'required'],
      ['password', 'required'],
    ]);
  });

  it('wrong types answer 400 invalid', async () => {
    const res = await post(USERS, { username: 1, level: 'n1', password: true });
    expect(errorsOf(res).map((e) => [e.field, e.type])).toEqual([
      ['username', 'invalid'],
      ['password', 'invalid'],
    ]);
    expect((await post(USERS, [1, 2])).status).toBe(400);
    const key = await post(KEYS, { name: 'k', superuser: 'no', roles: 'all' });
    expect(errorsOf(key).map((e) => e.field)).toEqual(['superuser', 'roles']);
  });

  it('a level other than n1 answers 400, on create and on update', async () => {
    const res = await post(USERS, { username: 'x', level: 'admin', password: 'p' });
    expect(res.status).toBe(400);
    expect(errorsOf(res)[0]).toMatchObject({ field: 'level', type: 'invalid' });
    const { id } = await createUser('y');
    expect((await put(`${USERS}/${id}`, { level: 'n2' })).status).toBe(400);
  });

  it('an unknown role id answers 400, on create and on update', async () => {
    const res = await post(KEYS, { name: 'k', roles: [1, 99] });
    expect(res.status).toBe(400);
    expect(errorsOf(res)[0]).toMatchObject({ field: 'roles', type: 'not_found' });
    const key = await createKey({ name: 'k' });
    expect((await put(`${KEYS}/${key.id}`, { roles: [5] })).status).toBe(400);
    expect(emu.state().apikeys[0]!.roles).toEqual([]);
  });

  it('a POST without a body answers 400 required', async () => {
    const res = await post(USERS, undefined);
    expect(res.status).toBe(400);
    expect(errorsOf(res)[0]).toMatchObject({ field: 'body', type: 'required' });
  });
});

describe('conflicts (409)', () => {
  it('a duplicate username on create answers 409 duplicated', async () => {
    await createUser('dup');
    const res = await post(USERS, { username: 'dup', level: 'n1', password: 'p' });
    expect(res.status).toBe(409);
    expectJson(res);
    expect(errorsOf(res)[0]).toMatchObject({ field: 'username', type: 'duplicated' });
  });

  it('renaming onto another user answers 409; renaming to itself is fine', async () => {
    await createUser('a');
    const b = await createUser('b');
    expect((await put(`${USERS}/${b.id}`, { username: 'a' })).status).toBe(409);
    expect((await put(`${USERS}/${b.id}`, { username: 'b' })).status).toBe(200);
  });
});

describe('not found (404) and method not allowed (405)', () => {
  it('unknown ids answer 404 on GET, PUT and DELETE, for both kinds', async () => {
    for (const base of [USERS, KEYS]) {
      const body = base === USERS ? { level: 'n1' } : { name: 'x' };
      for (const res of [await get(`${base}/999`), await put(`${base}/999`, body), await del(`${base}/999`)]) {
        expect(res.status).toBe(404);
        expectJson(res);
        expect(errorsOf(res)[0]).toMatchObject({ field: 'id', type: 'not_found' });
      }
    }
  });

  it('unknown paths answer 404', async () => {
    for (const path of ['/api/nothing', '/', '/api/sshusers/abc', '/api/3rdparty', '/api/sshusers/1/extra']) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expectJson(res);
    }
  });

  it('DELETE or PUT on a list URL, POST on an item URL answer 405 with Allow', async () => {
    const { id } = await createUser('m');
    const key = await createKey({ name: 'k' });
    const cases: [string, string, string][] = [
      ['DELETE', USERS, 'GET, HEAD, POST'],
      ['PUT', USERS, 'GET, HEAD, POST'],
      ['DELETE', KEYS, 'GET, HEAD, POST'],
      ['PUT', KEYS, 'GET, HEAD, POST'],
      ['POST', `${USERS}/${id}`, 'GET, HEAD, PUT, DELETE'],
      ['POST', `${KEYS}/${key.id}`, 'GET, HEAD, PUT, DELETE'],
      ['PATCH', `${USERS}/${id}`, 'GET, HEAD, PUT, DELETE'],
      ['POST', '/api/roles', 'GET, HEAD'],
    ];
    for (const [method, path, allow] of cases) {
      const res = await call(emu.url, method, path, { body: {} });
      expect(res.status, `${method} ${path}`).toBe(405);
      expectJson(res);
      expect(res.headers.allow).toBe(allow);
    }
    expect(emu.state().sshUsers).toHaveLength(1);
  });
});

describe('accepted (202) and processing (102): async writes', () => {
  it('writes answer 202 and take effect shortly after', async () => {
    // The delay is generous so that "not yet applied" holds even on a slow machine.
    emu.setFaults({ asyncWrites: true, asyncDelayMs: 800 });
    const res = await post(USERS, { username: 'later', level: 'n1', password: 'p' });
    expect(res.status).toBe(202);
    expectJson(res);
    expect(emu.state().pendingWrites).toBe(1);
    expect(emu.state().sshUsers).toEqual([]);
    await eventually(async () => ((await get(USERS)).json as { users: unknown[] }).users.length === 1, 1000);
    expect(emu.state().pendingWrites).toBe(0);
  });

  it('a bad async write still answers its error at once', async () => {
    emu.setFaults({ asyncWrites: true });
    expect((await post(USERS, { username: 'x' })).status).toBe(400);
    expect((await del(`${USERS}/5`)).status).toBe(404);
  });

  it('fetching an item with a write in flight answers an interim 102, then the updated item', async () => {
    const { id } = await createUser('slow');
    emu.setFaults({ asyncWrites: true, asyncDelayMs: 500 });
    expect((await put(`${USERS}/${id}`, { username: 'slow2' })).status).toBe(202);
    const res = await get(`${USERS}/${id}`);
    expect(res.interim).toEqual([102]);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ username: 'slow2' });
  });
});

describe('server errors and unavailability (500, 502, 503, 504)', () => {
  it('--fail-rate 1 answers 500, 502 or 504 and performs nothing', async () => {
    emu.setFaults({ failRate: 1 });
    const statuses = new Set<number>();
    for (let i = 0; i < 30; i += 1) {
      const res = await post(USERS, { username: `u${i}`, level: 'n1', password: 'p' });
      expectJson(res);
      statuses.add(res.status);
    }
    expect([...statuses].sort()).toEqual([500, 502, 504]);
    expect(emu.state().sshUsers).toHaveLength(0);
    expect(emu.requests().every((r) => r.fault === 'fail-rate')).toBe(true);
  });

  it('maintenance answers 503 to every API request, but not to the control API', async () => {
    emu.setFaults({ maintenance: true });
    for (const res of [await get(USERS), await post(KEYS, { name: 'x' }), await get('/api/roles', null)]) {
      expect(res.status).toBe(503);
      expectJson(res);
    }
    expect((await get('/_emulator/state', null)).status).toBe(200);
  });

  it('the rate limit answers 503 with Retry-After in seconds', async () => {
    emu.setFaults({ rateLimit: 0.01 });
    expect((await get(USERS)).status).toBe(200);
    const res = await get(USERS);
    expect(res.status).toBe(503);
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(errorsOf(res)[0]).toMatchObject({ type: 'rule' });
    expect(emu.requests().map((r) => r.fault ?? null)).toEqual([null, 'rate-limit']);
  });

  it('rules answer any status, with Retry-After as seconds or as an HTTP-date', async () => {
    emu.setFaults({
      rules: [
        { method: 'GET', path: '^/api/sshusers$', times: 1, status: 503, retryAfter: 3 },
        { method: 'GET', path: '^/api/sshusers$', times: 1, status: 503, retryAfterDateIn: 2 },
        { method: 'GET', times: 1, status: 502 },
        { method: 'GET', times: 1, status: 504, errors: [{ field: 'x', type: 'rule', msg: 'custom' }] },
      ],
    });
    const a = await get(USERS);
    expect([a.status, a.headers['retry-after']]).toEqual([503, '3']);
    const b = await get(USERS);
    expect(b.status).toBe(503);
    expect(Number.isNaN(Date.parse(String(b.headers['retry-after'])))).toBe(false);
    expect((await get(USERS)).status).toBe(502);
    const d = await get(USERS);
    expect(d.status).toBe(504);
    expect(errorsOf(d)).toEqual([{ field: 'x', type: 'rule', msg: 'custom' }]);
    expect((await get(USERS)).status).toBe(200);
  });

  it('a rule with status 102 sends an interim 102 before the normal answer', async () => {
    emu.setFaults({ rules: [{ status: 102, times: 1 }] });
    const res = await get(USERS);
    expect(res.interim).toEqual([102]);
    expect(res.status).toBe(200);
  });
});

describe('fault rules', () => {
  it('`after` lets requests through first, `times` bounds the firings, and counters show it', async () => {
    emu.setFaults({ rules: [{ method: 'POST', path: '^/api/sshusers$', after: 1, times: 1, status: 503, label: 'second-post' }] });
    const statuses = [];
    for (const name of ['a', 'b', 'c']) statuses.push((await post(USERS, { username: name, level: 'n1', password: 'p' })).status);
    expect(statuses).toEqual([200, 503, 200]);
    expect(emu.requests().map((r) => r.fault ?? null)).toEqual([null, 'second-post', null]);
    expect(emu.faults().ruleStats).toEqual([{ matched: 3, fired: 1 }]);
  });

  it('reset destroys the connection and performs nothing', async () => {
    emu.setFaults({ rules: [{ method: 'POST', reset: true, times: 1 }] });
    await expect(post(USERS, { username: 'r', level: 'n1', password: 'p' })).rejects.toThrow();
    expect(emu.state().sshUsers).toHaveLength(0);
    expect(emu.requests()[0]).toMatchObject({ status: 0, fault: 'rule:0' });
  });

  it('commitThenFail performs the write, then loses the answer (reset or 504)', async () => {
    emu.setFaults({ rules: [{ method: 'POST', path: 'sshusers', times: 1, commitThenFail: 'reset' }, { method: 'POST', path: 'apikeys', times: 1, commitThenFail: 504 }] });
    await expect(post(USERS, { username: 'lost', level: 'n1', password: 'p' })).rejects.toThrow();
    const res = await post(KEYS, { name: 'lost-key' });
    expect(res.status).toBe(504);
    expect(emu.state().sshUsers.map((u) => u.username)).toEqual(['lost']);
    expect(emu.state().apikeys.map((k) => k.name)).toEqual(['lost-key']);
  });

  it('malformed answers 200 with a body that is not JSON', async () => {
    emu.setFaults({ rules: [{ method: 'GET', malformed: true, times: 1 }] });
    await createUser('m');
    const res = await get(USERS);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.json).toBeUndefined();
    expect(() => JSON.parse(res.text)).toThrow();
  });

  it('delayMs slows the answer and then answers normally', async () => {
    emu.setFaults({ rules: [{ delayMs: 30, times: 1, label: 'slow' }] });
    expect((await get(USERS)).status).toBe(200);
    expect(emu.requests()[0]).toMatchObject({ status: 200, fault: 'slow' });
  });

  it('duplicatePage makes pages overlap: items repeat, yet every item is listed', async () => {
    emu.seed({ count: { sshUsers: 30 } });
    emu.setFaults({ rules: [{ method: 'GET', path: '^/api/sshusers$', times: 1, duplicatePage: true }] });
    const pages = await listAll(emu.url, USERS, 'users', 10);
    const ids = pages.flatMap((p) => p.items.map((i) => i.id));
    expect(ids.length).toBeGreaterThan(30);
    expect(new Set(ids).size).toBe(30);
  });

  it('cursorLoop points next back to an earlier page, with a cursor that is never 0', async () => {
    emu.seed({ count: { sshUsers: 30 } });
    const first = (await get(`${USERS}?cursor=0&size=10`)).json as { cursor: { next: number }; users: { id: number }[] };
    emu.setFaults({ rules: [{ method: 'GET', cursorLoop: true, times: 2 }] });
    const second = (await get(`${USERS}?cursor=${first.cursor.next}&size=10`)).json as { cursor: { next: number; previous: number } };
    // The vendor's client stops at a falsy `next`: a loop must look like a cursor, not an end.
    expect(second.cursor.next).not.toBe(0);
    expect(second.cursor.next).not.toBe(first.cursor.next);
    const again = (await get(`${USERS}?cursor=${second.cursor.next}&size=10`)).json as { cursor: { next: number }; users: { id: number }[] };
    expect(again.users.map((u) => u.id)).toEqual(first.users.map((u) => u.id));
    expect(again.cursor.next).not.toBe(0);
  });

  it('bad rules are refused with 400 and the old settings stay', async () => {
    const res = await call(emu.url, 'PUT', '/_emulator/faults', { token: null, body: { rules: [{ status: 503, reset: true }] } });
    expect(res.status).toBe(400);
    expect(errorsOf(res)[0]!.msg).toMatch(/one action/);
    expect(() => emu.setFaults({ failRate: 7 })).toThrow(expect.objectContaining({ code: 'emulator_faults' }));
    expect(emu.faults().rules).toEqual([]);
  });
});

describe('control API', () => {
  it('logs API requests with method, path, query, status and time, and clears the log', async () => {
    await get(`${USERS}?cursor=0&size=5`);
    await post(KEYS, { name: 'k' }, RO_TOKEN);
    await get('/_emulator/state', null);
    const res = await get('/_emulator/requests', null);
    expect(res.status).toBe(200);
    const { requests } = res.json as { requests: Record<string, unknown>[] };
    expect(requests).toEqual([
      { seq: expect.any(Number), method: 'GET', path: USERS, query: { cursor: '0', size: '5' }, status: 200, time: expect.stringMatching(ISO), durationMs: expect.any(Number), next: null },
      { seq: expect.any(Number), method: 'POST', path: KEYS, query: {}, status: 403, time: expect.stringMatching(ISO), durationMs: expect.any(Number) },
    ]);
    const since = (await get(`/_emulator/requests?since=${requests[0]!.seq as number}`, null)).json as { requests: unknown[] };
    expect(since.requests).toHaveLength(1);
    expect((await del('/_emulator/requests', null)).status).toBe(200);
    expect(((await get('/_emulator/requests', null)).json as { requests: unknown[] }).requests).toEqual([]);
  });

  it('seeds items and counts, and shows state with passwordSet and passwordVersion, never a password', async () => {
    const res = await post('/_emulator/seed', { sshUsers: [{ username: 'root', password: 'toor' }, { username: 'nopw' }], apikeys: [{ name: 'k', roles: [1] }], count: { apikeys: 2 } }, null);
    expect(res.status).toBe(200);
    const seeded = res.json as { sshUsers: { id: number; username: string }[]; apikeys: { id: number; name: string; token: string }[]; counts: unknown };
    expect(seeded.sshUsers.map((u) => [u.id, u.username])).toEqual([
      [1, 'root'],
      [2, 'nopw'],
    ]);
    expect(seeded.apikeys.map((k) => k.name)).toEqual(['k', 'bench-key-2', 'bench-key-3']);
    expect(seeded.counts).toEqual({ sshUsers: 2, apikeys: 3 });
    const state = await get('/_emulator/state', null);
    expect(state.text).not.toContain('toor');
    const body = state.json as { sshUsers: { passwordSet: boolean; passwordVersion: number }[]; apikeys: { token: string }[] };
    expect(body.sshUsers.map((u) => [u.passwordSet, u.passwordVersion])).toEqual([
      [true, 1],
      [false, 0],
    ]);
    expect(body.apikeys[0]!.token).toBe(seeded.apikeys[0]!.token);
  });

  it('refuses a seed that breaks the API rules, adding nothing', async () => {
    await createUser('taken');
    const res = await post('/_emulator/seed', { sshUsers: [{ username: 'new' }, { username: 'taken' }] }, null);
    expect(res.status).toBe(400);
    expect(errorsOf(res)[0]).toMatchObject({ type: 'duplicated' });
    expect((await post('/_emulator/seed', { sshUsers: [{ name: 'x' }] }, null)).status).toBe(400);
    expect(emu.state().sshUsers.map((u) => u.username)).toEqual(['taken']);
  });

  it('checks passwords without revealing them', async () => {
    await createUser('p', 'right');
    const check = (password: string) => post('/_emulator/check-password', { username: 'p', password }, null);
    expect((await check('right')).json).toEqual({ match: true });
    expect((await check('wrong')).json).toEqual({ match: false });
    expect((await post('/_emulator/check-password', { username: 'ghost', password: 'x' }, null)).status).toBe(404);
  });

  it('reset empties the state, keeps roles and restarts ids', async () => {
    await createUser('gone');
    expect((await post('/_emulator/reset', {}, null)).status).toBe(200);
    expect(emu.state()).toMatchObject({ sshUsers: [], apikeys: [], roles: expect.arrayContaining([expect.objectContaining({ id: 4, name: 'admin' })]) });
    expect((await createUser('first')).id).toBe(1);
  });

  it('reads and changes faults at runtime', async () => {
    const res = await put('/_emulator/faults', { latencyMs: 1, rules: [{ path: 'x', reset: true }] }, null);
    expect(res.status).toBe(200);
    const got = (await get('/_emulator/faults', null)).json;
    expect(got).toEqual({
      rateLimit: null,
      rateLimitBurst: null,
      latencyMs: 1,
      failRate: 0,
      maintenance: false,
      asyncWrites: false,
      asyncDelayMs: 50,
      rules: [{ path: 'x', reset: true }],
      ruleStats: [{ matched: 0, fired: 0 }],
    });
  });

  it('needs no token, is not logged, and answers 404/405 for unknown control URLs', async () => {
    await get('/_emulator/state', null);
    expect(emu.requests()).toEqual([]);
    expect((await get('/_emulator/nothing', null)).status).toBe(404);
    expect((await del('/_emulator/state', null)).status).toBe(405);
  });

  it('is off with control: false (the path is then an unknown API path)', async () => {
    const plain = await startEmulator({ tokens: [RW_TOKEN], control: false });
    try {
      expect((await call(plain.url, 'GET', '/_emulator/state', { token: null })).status).toBe(401);
      expect((await call(plain.url, 'GET', '/_emulator/state')).status).toBe(404);
    } finally {
      await plain.close();
    }
  });
});

describe('--data FILE', () => {
  it('persists after every write and loads at start', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'amsync-emulator-'));
    const dataFile = join(dir, 'state.json');
    try {
      const first = await startEmulator({ tokens: [RW_TOKEN], dataFile });
      const user = (await call(first.url, 'POST', USERS, { body: { username: 'kept', level: 'n1', password: 'pw' } })).json as { id: number };
      const key = (await call(first.url, 'POST', KEYS, { body: { name: 'kept-key', roles: [2] } })).json as { id: number; token: string };
      const gone = (await call(first.url, 'POST', KEYS, { body: { name: 'gone' } })).json as { id: number };
      expect((await call(first.url, 'DELETE', `${KEYS}/${gone.id}`)).status).toBe(200);
      const onDisk = await readFile(dataFile, 'utf8');
      expect(onDisk).toContain('kept-key');
      expect(onDisk).not.toContain('"pw"');
      await first.close();

      const second = await startEmulator({ tokens: [RW_TOKEN], dataFile });
      try {
        expect((await call(second.url, 'GET', `${USERS}/${user.id}`)).json).toMatchObject({ username: 'kept' });
        expect((await call(second.url, 'GET', `${KEYS}/${key.id}`)).json).toMatchObject({ name: 'kept-key', token: key.token });
        expect((await call(second.url, 'POST', '/_emulator/check-password', { token: null, body: { username: 'kept', password: 'pw' } })).json).toEqual({ match: true });
        // Ids of deleted items are not handed out again after a restart.
        expect(((await call(second.url, 'POST', KEYS, { body: { name: 'new' } })).json as { id: number }).id).toBe(gone.id + 1);
      } finally {
        await second.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a data file that is not one, with a stable code', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'amsync-emulator-'));
    try {
      const bad = join(dir, 'bad.json');
      await import('node:fs/promises').then((fs) => fs.writeFile(bad, '{"version": 2}'));
      await expect(startEmulator({ tokens: [RW_TOKEN], dataFile: bad })).rejects.toMatchObject({ code: 'emulator_data_file' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('options', () => {
  it('are checked loudly', async () => {
    await expect(startEmulator({ tokens: [RW_TOKEN], port: 70000 })).rejects.toThrow('Expected `port` to be an integer from 0 to 65535, got 70000');
    await expect(startEmulator({})).rejects.toMatchObject({ code: 'emulator_options' });
    await expect(startEmulator({ tokens: [RW_TOKEN], failRate: 3 })).rejects.toThrow('Expected `failRate`');
    await expect(startEmulator({ tokens: [RW_TOKEN], roles: [{ id: 1, name: 'a' }, { id: 1, name: 'b' }] })).rejects.toMatchObject({ code: 'emulator_options' });
    const badScope = [{ id: 1, name: 'a', scopes: [{ name: 'sshusers', read: 'yes' }] }] as unknown as { id: number; name: string }[];
    await expect(startEmulator({ tokens: [RW_TOKEN], roles: badScope })).rejects.toThrow('Expected `roles[0].scopes[0]`');
  });

  it('custom roles and page sizes apply', async () => {
    const scopes = [{ name: 'sshusers', read: true, write: false }];
    const custom = await startEmulator({ tokens: [RW_TOKEN], roles: [{ id: 10, name: 'ten', scopes }, { id: 11, name: 'eleven' }], pageSizeDefault: 2, pageSizeMax: 3 });
    try {
      custom.seed({ count: { apikeys: 5 } });
      expect(((await call(custom.url, 'GET', '/api/roles')).json as { roles: unknown[] }).roles).toEqual([
        expect.objectContaining({ id: 10, name: 'ten', scopes }),
        expect.objectContaining({ id: 11, name: 'eleven', scopes: [] }),
      ]);
      expect(((await call(custom.url, 'GET', KEYS)).json as { apikeys: unknown[] }).apikeys).toHaveLength(2);
      expect(((await call(custom.url, 'GET', `${KEYS}?size=50`)).json as { apikeys: unknown[] }).apikeys).toHaveLength(3);
      expect((await call(custom.url, 'POST', KEYS, { body: { name: 'k', roles: [1] } })).status).toBe(400);
    } finally {
      await custom.close();
    }
  });
});
