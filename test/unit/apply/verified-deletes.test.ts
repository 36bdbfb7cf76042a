import { describe, expect, it } from 'vitest';
import { applyPlan, type PasswordRecorder } from '../../../src/apply/index.js';
import type { DesiredState } from '../../../src/model/index.js';
import { plan } from '../../../src/plan/index.js';
import { readActualState } from '../../../src/state/index.js';
import { apiError, StoreService } from '../../helpers/store-service.js';
import { desired, key, policyFor, secret, user } from '../../helpers/plan-fixtures.js';

async function planThenApply(service: StoreService, d: DesiredState, beforeApply?: () => void, signal?: AbortSignal, passwords?: PasswordRecorder) {
  const { state } = await readActualState(service);
  const policy = policyFor(d);
  const p = plan(d, state, policy);
  beforeApply?.();
  service.calls = [];
  const results = await applyPlan(p, { writer: service, desired: d, actual: state, policy, signal, ...(passwords === undefined ? {} : { passwords }) });
  return { plan: p, results };
}

/** A gateway, or a service version without the item route: every by-id read answers 404, the listing is whole. */
class NoItemRoute extends StoreService {
  override async fetchSshUser(id: number): Promise<undefined> {
    await super.fetchSshUser(id);
    return undefined;
  }

  override async fetchApikey(id: number): Promise<undefined> {
    await super.fetchApikey(id);
    return undefined;
  }
}

const pruneUsers = (d: DesiredState): DesiredState => ({ ...d, prune: { sshUsers: true, apikeys: true } });

describe('verified deletes: a delete is sent only for an item that is still what the plan meant', () => {
  it('a user renamed into a declared name between listing and apply is adopted and never deleted', async () => {
    // The adversarial finding: create alice → 409 → adopt id 50 → the delete wave deleted id 50.
    const s = new StoreService();
    s.seedUser('old-contractor', 'n1', 50);
    const d = pruneUsers(desired({ sshUsers: [user('alice', { password: secret('pw') })] }));
    const { plan: p, results } = await planThenApply(s, d, () => {
      s.putUser({ id: 50, username: 'alice', level: 'n1' });
    });
    expect(p.changes.map((c) => `${c.action}:${c.key}`)).toEqual(['create:alice', 'delete:old-contractor']);
    expect(s.users.get(50)?.username).toBe('alice');
    expect(s.calls.filter((c) => c.startsWith('deleteSshUser'))).toEqual([]);
    expect(results.find((r) => r.action === 'delete')).toMatchObject({ status: 'skipped', drift: expect.stringMatching(/adopted or written by this run|now named "alice"/) });
    expect(results.find((r) => r.action === 'create')).toMatchObject({ status: 'applied', id: 50 });
  });

  it('a user renamed since the listing (to any other name) is re-read by id and not deleted', async () => {
    const s = new StoreService();
    s.seedUser('old-contractor', 'n1', 50);
    const { results } = await planThenApply(s, pruneUsers(desired({})), () => {
      s.putUser({ id: 50, username: 'bob', level: 'n1' });
    });
    expect(s.users.get(50)?.username).toBe('bob');
    expect(results).toMatchObject([{ action: 'delete', status: 'skipped', drift: expect.stringContaining('now named "bob"') }]);
  });

  it('each delete is preceded by exactly one fetch of that id, and an unchanged item is deleted', async () => {
    const s = new StoreService();
    s.seedUser('gone-user', 'n1', 7);
    s.seedKey('gone-key', [], false, 8);
    s.seedUser('keep', 'n1', 9);
    const d = pruneUsers(desired({ sshUsers: [user('keep')] }));
    const { results } = await planThenApply(s, d);
    expect(results.every((r) => r.status === 'applied')).toBe(true);
    expect(s.calls.filter((c) => /^(fetch|delete)/.test(c)).sort()).toEqual(['deleteApikey 8', 'deleteSshUser 7', 'fetchApikey 8', 'fetchSshUser 7']);
    expect(s.calls.indexOf('fetchSshUser 7')).toBeLessThan(s.calls.indexOf('deleteSshUser 7'));
  });

  it('an item already gone at the re-read is reported as already deleted, with no DELETE sent', async () => {
    const s = new StoreService();
    s.seedUser('x', 'n1', 7);
    const forgotten: number[] = [];
    const passwords: PasswordRecorder = { record: () => undefined, forget: (id) => forgotten.push(id) };
    const { results } = await planThenApply(s, pruneUsers(desired({})), () => s.dropUser(7), undefined, passwords);
    expect(results).toMatchObject([{ status: 'applied', drift: 'was already deleted' }]);
    expect(s.calls).not.toContain('deleteSshUser 7');
    // Its password fingerprint goes with it, as after a DELETE answered 404: a user created
    // later under that id must not be taken for one whose password was set.
    expect(forgotten).toEqual([7]);
  });

  it('a by-id 404 for a user a fresh listing still shows fails the delete, saying so, and sends no DELETE', async () => {
    // Issue 27 finding 3: a gateway (or a service version without the item route) answers
    // 404 to GET /api/sshusers/{id} while the listing shows the user. It was reported as
    // "deleted (drift: was already deleted)" on every run, and no DELETE was ever sent.
    const s = new NoItemRoute();
    s.seedUser('stale1', 'n1', 7);
    const forgotten: number[] = [];
    const passwords: PasswordRecorder = { record: () => undefined, forget: (id) => forgotten.push(id) };
    const { results } = await planThenApply(s, pruneUsers(desired({})), undefined, undefined, passwords);
    expect(results).toMatchObject([{ action: 'delete', key: 'stale1', status: 'failed', id: 7, error: expect.stringMatching(/^not deleted: GET by id 7 answered 404 .*a fresh listing still shows id 7.*no DELETE was sent.*item route is missing .*gateway/) }]);
    expect(results[0]!.drift).toBeUndefined();
    expect(s.calls.filter((c) => c.startsWith('delete'))).toEqual([]);
    expect(s.users.has(7)).toBe(true);
    expect(forgotten).toEqual([]);
  });

  it('an apikey meets the same contradiction the same way', async () => {
    const s = new NoItemRoute();
    s.seedKey('old-key', [], false, 8);
    const { results } = await planThenApply(s, pruneUsers(desired({})));
    expect(results).toMatchObject([{ kind: 'apikey', status: 'failed', error: expect.stringContaining('GET by id 8 answered 404 (not found), yet a fresh listing still shows id 8') }]);
    expect(s.calls.filter((c) => c.startsWith('delete'))).toEqual([]);
    expect(s.keys.has(8)).toBe(true);
  });

  it('behind such a gateway, an item really gone is already deleted and one still listed fails: one fresh listing per kind', async () => {
    const s = new NoItemRoute();
    for (const [name, id] of [['a', 7], ['b', 8], ['c', 9]] as const) s.seedUser(name, 'n1', id);
    s.seedKey('k1', [], false, 10);
    s.seedKey('k2', [], false, 11);
    const { results } = await planThenApply(s, pruneUsers(desired({})), () => {
      s.dropUser(8);
      s.dropKey(11);
    });
    const byKey = new Map(results.map((r) => [r.key, r]));
    expect(byKey.get('b')).toMatchObject({ status: 'applied', drift: 'was already deleted' });
    expect(byKey.get('k2')).toMatchObject({ status: 'applied', drift: 'was already deleted' });
    for (const k of ['a', 'c', 'k1']) expect(byKey.get(k)).toMatchObject({ status: 'failed', error: expect.stringContaining('still shows') });
    expect(s.calls.filter((c) => c.startsWith('delete'))).toEqual([]);
    // Bounded: the deletes that met a 404 share one re-list of their kind.
    expect(s.calls.filter((c) => c === 'listSshUsers')).toHaveLength(1);
    expect(s.calls.filter((c) => c === 'listApikeys')).toHaveLength(1);
  });

  it('an item gone at the re-read is confirmed by a fresh listing before it is reported deleted', async () => {
    const s = new StoreService();
    s.seedUser('x', 'n1', 7);
    const { results } = await planThenApply(s, pruneUsers(desired({})), () => s.dropUser(7));
    expect(results).toMatchObject([{ status: 'applied', drift: 'was already deleted' }]);
    expect(s.calls).toEqual(['fetchSshUser 7', 'listSshUsers']);
  });

  it('a fresh listing that fails leaves a by-id 404 unconfirmed: the delete fails', async () => {
    const s = new NoItemRoute();
    s.seedUser('x', 'n1', 7);
    const { results } = await planThenApply(s, pruneUsers(desired({})), () => {
      s.before('listSshUsers', () => {
        throw apiError('listing_incomplete');
      });
    });
    expect(results).toMatchObject([{ status: 'failed', error: expect.stringContaining('not deleted') }]);
    expect(s.calls.filter((c) => c.startsWith('delete'))).toEqual([]);
  });

  it('an apikey renamed to another name since the listing is not deleted', async () => {
    const s = new StoreService();
    s.seedKey('old-key', [], false, 8);
    const { results } = await planThenApply(s, pruneUsers(desired({ apikeys: [key('billing')] })), () => {
      s.putKey({ ...s.keys.get(8)!, name: 'billing' });
    });
    expect(s.keys.has(8)).toBe(true);
    expect(results.find((r) => r.action === 'delete')).toMatchObject({ status: 'skipped' });
  });

  it('a failed re-read fails the delete instead of sending it blind', async () => {
    const s = new StoreService();
    s.seedUser('x', 'n1', 7);
    s.before('fetchSshUser', () => {
      throw apiError('server_error');
    });
    const { results } = await planThenApply(s, pruneUsers(desired({})));
    expect(results).toMatchObject([{ status: 'failed', error: expect.stringContaining('re-reading it failed') }]);
    expect(s.users.has(7)).toBe(true);
  });

  it('a declared user that a create adopted after a lost response is never deleted in the same run', async () => {
    const s = new StoreService();
    s.seedUser('old', 'n1', 50);
    s.before('createSshUser', (svc) => {
      svc.putUser({ id: 50, username: 'alice', level: 'n1' });
    });
    const d = pruneUsers(desired({ sshUsers: [user('alice', { password: secret('pw') })] }));
    await planThenApply(s, d);
    expect(s.users.get(50)?.username).toBe('alice');
  });
});

describe('an aborted apply starts no new write', () => {
  it('every change not started is skipped with the reason, and nothing is written', async () => {
    const s = new StoreService();
    const controller = new AbortController();
    controller.abort(new Error('interrupted (SIGINT)'));
    const d = desired({ sshUsers: [user('a', { password: secret('p') }), user('b', { password: secret('p') })] });
    const { results } = await planThenApply(s, d, undefined, controller.signal);
    expect(results).toMatchObject([
      { status: 'skipped', error: 'not started: interrupted (SIGINT)' },
      { status: 'skipped', error: 'not started: interrupted (SIGINT)' },
    ]);
    expect(s.users.size).toBe(0);
  });
});
