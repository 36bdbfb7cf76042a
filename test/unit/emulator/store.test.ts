import { describe, expect, it } from 'vitest';
import type { Page } from '../../../src/emulator/collection.js';
import { Store, type StoreResult } from '../../../src/emulator/store.js';
import type { SshUserView } from '../../../src/emulator/types.js';
import { defaultRoles } from '../../../src/emulator/options.js';

function newStore(start = Date.parse('2024-01-01T00:00:00Z')) {
  let now = start;
  let n = 0;
  const store = new Store({ now: () => new Date(now), newToken: () => `tok-${(n += 1)}`, passwordPepper: 'pepper' }, defaultRoles);
  return { store, tick: (ms: number) => (now += ms) };
}

function value<T>(r: StoreResult<T>): T {
  if (!r.ok) throw new Error(`expected ok, got ${r.status} ${JSON.stringify(r.errors)}`);
  return r.value;
}

function run<T>(r: StoreResult<() => T>): T {
  return value(r)();
}

function failure(r: StoreResult<unknown>) {
  if (r.ok) throw new Error('expected a failure');
  return r;
}

describe('store: pagination', () => {
  it('walks 250 items in pages of 7: every item exactly once, null ends', () => {
    const { store } = newStore();
    value(store.seed({ count: { sshUsers: 250 } }));
    const seen: number[] = [];
    let cursor: number | null = 0;
    let pages = 0;
    let before: number | null = null;
    while (cursor !== null) {
      const page: Page<SshUserView> = value(store.listSshUsers(cursor, 7));
      // previous names the page before: null on the first page, else the cursor that page had.
      expect(page.previous).toBe(before);
      seen.push(...page.items.map((u) => u.id));
      before = page.current;
      cursor = page.next;
      pages += 1;
    }
    expect(pages).toBe(Math.ceil(250 / 7));
    expect(seen).toHaveLength(250);
    expect(new Set(seen).size).toBe(250);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
  });

  it('previous leads back to the page before', () => {
    const { store } = newStore();
    value(store.seed({ count: { apikeys: 30 } }));
    const p1 = value(store.listApikeys(0, 10));
    const p2 = value(store.listApikeys(p1.next!, 10));
    const p3 = value(store.listApikeys(p2.next!, 10));
    expect(p3.next).toBeNull();
    expect(p3.previous).toBe(p2.current);
    expect(p2.previous).toBe(0);
    expect(value(store.listApikeys(p3.previous!, 10)).items.map((k) => k.id)).toEqual(p2.items.map((k) => k.id));
  });

  it('cursors are opaque: neither offsets nor page numbers, and made-up values are refused', () => {
    const { store } = newStore();
    value(store.seed({ count: { sshUsers: 100 } }));
    const p1 = value(store.listSshUsers(0, 10));
    const p2 = value(store.listSshUsers(p1.next!, 10));
    for (const c of [p1.next!, p2.next!]) {
      expect([10, 20, 1, 2, 11, 21]).not.toContain(c);
    }
    expect(failure(store.listSshUsers(10, 10)).status).toBe(400);
    expect(failure(store.listSshUsers(2, 10)).errors[0]).toMatchObject({ field: 'cursor', type: 'invalid' });
    // A users cursor means nothing to apikeys.
    value(store.seed({ count: { apikeys: 100 } }));
    expect(failure(store.listApikeys(p1.next!, 10)).status).toBe(400);
  });

  it('a cursor stays valid when the item it starts at is deleted', () => {
    const { store } = newStore();
    value(store.seed({ count: { sshUsers: 20 } }));
    const p1 = value(store.listSshUsers(0, 5));
    const firstOfP2 = value(store.listSshUsers(p1.next!, 5)).items[0]!.id;
    run(store.prepareDeleteSshUser(firstOfP2));
    const p2 = value(store.listSshUsers(p1.next!, 5));
    expect(p2.items.map((u) => u.id)).toEqual([firstOfP2 + 1, firstOfP2 + 2, firstOfP2 + 3, firstOfP2 + 4, firstOfP2 + 5]);
  });

  it('an empty store answers one empty page', () => {
    const { store } = newStore();
    expect(value(store.listSshUsers(0, 25))).toMatchObject({ items: [], current: 0, next: null, previous: null });
  });

  it('pages 100k items without scanning: the last page is found from its cursor', () => {
    const { store } = newStore();
    value(store.seed({ count: { sshUsers: 100_000 } }));
    let cursor: number | null = 0;
    let count = 0;
    let pages = 0;
    while (cursor !== null) {
      const page: Page<SshUserView> = value(store.listSshUsers(cursor, 100));
      count += page.items.length;
      cursor = page.next;
      pages += 1;
    }
    expect(pages).toBe(1000);
    expect(count).toBe(100_000);
  });
});

describe('store: SSH users', () => {
  it('creates with service-assigned ids and never shows the password', () => {
    const { store } = newStore();
    const user = run(store.prepareCreateSshUser({ username: 'deploy', level: 'n1', password: 's3cret', id: 99 }));
    expect(user).toEqual({ id: 1, username: 'deploy', level: 'n1', created_at: '2024-01-01T00:00:00.000Z', updated_at: '2024-01-01T00:00:00.000Z' });
    expect(JSON.stringify(store.snapshot())).not.toContain('s3cret');
    expect(value(store.checkPassword('deploy', 's3cret'))).toEqual({ match: true });
    expect(value(store.checkPassword('deploy', 'other'))).toEqual({ match: false });
  });

  it('requires username, level and password, and only level n1', () => {
    const { store } = newStore();
    const r = failure(store.prepareCreateSshUser({ level: 'n2', password: 7 }));
    expect(r.status).toBe(400);
    expect(r.errors).toEqual([
      { field: 'username', type: 'required', msg: expect.any(String) },
      { field: 'level', type: 'invalid', msg: expect.any(String) },
      { field: 'password', type: 'invalid', msg: expect.any(String) },
    ]);
    expect(failure(store.prepareCreateSshUser([])).errors[0]).toMatchObject({ field: 'body', type: 'invalid' });
    expect(failure(store.prepareCreateSshUser(undefined)).errors[0]).toMatchObject({ field: 'body', type: 'required' });
  });

  it('refuses a duplicate username on create and on rename (409), not a rename to itself', () => {
    const { store } = newStore();
    run(store.prepareCreateSshUser({ username: 'a', level: 'n1', password: 'p' }));
    const b = run(store.prepareCreateSshUser({ username: 'b', level: 'n1', password: 'p' }));
    expect(failure(store.prepareCreateSshUser({ username: 'a', level: 'n1', password: 'p' }))).toMatchObject({ status: 409, errors: [{ field: 'username', type: 'duplicated' }] });
    expect(failure(store.prepareUpdateSshUser(b.id, { username: 'a' })).status).toBe(409);
    expect(value(store.prepareUpdateSshUser(b.id, { username: 'b' })).call(null).username).toBe('b');
    // After a rename the old name is free again.
    run(store.prepareUpdateSshUser(b.id, { username: 'c' }));
    expect(run(store.prepareCreateSshUser({ username: 'b', level: 'n1', password: 'p' })).id).toBe(3);
  });

  it('updates partially: fields not sent are kept; a password write bumps passwordVersion', () => {
    const { store, tick } = newStore();
    const u = run(store.prepareCreateSshUser({ username: 'a', level: 'n1', password: 'p1' }));
    tick(1000);
    const after = run(store.prepareUpdateSshUser(u.id, { password: 'p2' }));
    expect(after).toMatchObject({ username: 'a', level: 'n1', created_at: u.created_at, updated_at: '2024-01-01T00:00:01.000Z' });
    run(store.prepareUpdateSshUser(u.id, { password: 'p2' }));
    expect(store.snapshot().sshUsers[0]).toMatchObject({ passwordSet: true, passwordVersion: 3 });
    expect(value(store.checkPassword('a', 'p2')).match).toBe(true);
    tick(1000);
    expect(run(store.prepareUpdateSshUser(u.id, {})).updated_at).toBe('2024-01-01T00:00:01.000Z');
    expect(failure(store.prepareUpdateSshUser(u.id, { level: 'root' })).status).toBe(400);
  });

  it('answers 404 for unknown ids on fetch, update and delete', () => {
    const { store } = newStore();
    expect(failure(store.getSshUser(5))).toMatchObject({ status: 404, errors: [{ field: 'id', type: 'not_found' }] });
    expect(failure(store.prepareUpdateSshUser(5, { level: 'n1' })).status).toBe(404);
    expect(failure(store.prepareDeleteSshUser(5)).status).toBe(404);
  });

  it('never reuses the id of a deleted item', () => {
    const { store } = newStore();
    const a = run(store.prepareCreateSshUser({ username: 'a', level: 'n1', password: 'p' }));
    run(store.prepareDeleteSshUser(a.id));
    expect(run(store.prepareCreateSshUser({ username: 'a', level: 'n1', password: 'p' })).id).toBe(2);
  });
});

describe('store: apikeys', () => {
  it('creates with defaults, a token and roles as Role objects', () => {
    const { store } = newStore();
    expect(run(store.prepareCreateApikey({ name: 'k' }))).toMatchObject({ id: 1, name: 'k', superuser: false, roles: [], token: 'tok-1' });
    expect(run(store.prepareCreateApikey({ name: 'j', superuser: true, roles: [3, 1, 3] })).roles).toEqual([
      { id: 3, name: 'auditor' },
      { id: 1, name: 'viewer' },
    ]);
  });

  it('allows two apikeys with one name (names are not unique on the service)', () => {
    const { store } = newStore();
    run(store.prepareCreateApikey({ name: 'same' }));
    expect(run(store.prepareCreateApikey({ name: 'same' })).id).toBe(2);
    expect(value(store.listApikeys(0, 25)).items.map((k) => k.name)).toEqual(['same', 'same']);
  });

  it('refuses unknown role ids and wrong types (400)', () => {
    const { store } = newStore();
    expect(failure(store.prepareCreateApikey({ name: 'k', roles: [1, 42] })).errors).toEqual([{ field: 'roles', type: 'not_found', msg: expect.stringContaining('42') }]);
    expect(failure(store.prepareCreateApikey({ name: 'k', roles: ['1'] })).errors[0]).toMatchObject({ field: 'roles', type: 'invalid' });
    expect(failure(store.prepareCreateApikey({ name: 'k', roles: 1 })).errors[0]).toMatchObject({ field: 'roles', type: 'invalid' });
    expect(failure(store.prepareCreateApikey({ name: 'k', superuser: 'yes' })).errors[0]).toMatchObject({ field: 'superuser', type: 'invalid' });
    expect(failure(store.prepareCreateApikey({ superuser: true })).errors[0]).toMatchObject({ field: 'name', type: 'required' });
  });

  it('updates partially and keeps the token', () => {
    const { store } = newStore();
    const k = run(store.prepareCreateApikey({ name: 'k', roles: [1] }));
    const u = run(store.prepareUpdateApikey(k.id, { roles: [] }));
    expect(u).toMatchObject({ name: 'k', superuser: false, roles: [], token: k.token });
    expect(run(store.prepareUpdateApikey(k.id, { superuser: true, token: 'mine' }))).toMatchObject({ superuser: true, token: k.token });
    expect(failure(store.prepareUpdateApikey(k.id, { roles: [9] })).status).toBe(400);
  });
});

describe('store: seed, reset, data', () => {
  it('seeds all or nothing under the API rules', () => {
    const { store } = newStore();
    const r = failure(store.seed({ sshUsers: [{ username: 'a' }, { username: 'a' }], apikeys: [{ name: 'k', roles: [77] }] }));
    expect(r.errors.map((e) => e.type)).toEqual(['duplicated', 'not_found']);
    expect(store.snapshot().sshUsers).toHaveLength(0);
    const ok = value(store.seed({ sshUsers: [{ username: 'a', password: 'p' }], count: { sshUsers: 2, apikeys: 1 } }));
    expect(ok.sshUsers.map((u) => u.username)).toEqual(['a', 'bench-user-2', 'bench-user-3']);
    expect(store.snapshot().sshUsers.map((u) => u.passwordSet)).toEqual([true, false, false]);
  });

  it('reset empties both kinds, restarts ids and keeps roles', () => {
    const { store } = newStore();
    value(store.seed({ count: { sshUsers: 3, apikeys: 3 } }));
    store.reset();
    expect(store.snapshot()).toMatchObject({ sshUsers: [], apikeys: [], roles: defaultRoles });
    expect(run(store.prepareCreateApikey({ name: 'k' })).id).toBe(1);
  });

  it('round-trips through exportData/importData, passwords still verifiable', () => {
    const { store } = newStore();
    run(store.prepareCreateSshUser({ username: 'a', level: 'n1', password: 'p' }));
    run(store.prepareCreateApikey({ name: 'k', roles: [2] }));
    run(store.prepareDeleteApikey(1));
    const data = JSON.parse(JSON.stringify(store.exportData()));
    // Roles are configured, not persisted: the same clock gives them the same timestamps.
    const other = new Store({ now: () => new Date('2024-01-01T00:00:00Z'), newToken: () => 'x', passwordPepper: 'different' }, defaultRoles);
    other.importData(data);
    expect(other.snapshot()).toEqual(store.snapshot());
    expect(value(other.checkPassword('a', 'p')).match).toBe(true);
    expect(run(other.prepareCreateApikey({ name: 'n' })).id).toBe(2);
  });
});
