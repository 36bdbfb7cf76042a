import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/api/index.js';
import { applyPlan } from '../../../src/apply/index.js';
import type { DesiredState, SecretValue } from '../../../src/model/index.js';
import { plan } from '../../../src/plan/index.js';
import { readActualState } from '../../../src/state/index.js';
import { apiError, StoreService } from '../../helpers/store-service.js';
import { desired, key, policyFor, secret, user } from '../../helpers/plan-fixtures.js';

async function syncOnce(service: StoreService, d: DesiredState, extra: { recorded?: Map<number, string>; tokens?: Map<string, string> } = {}) {
  const { state } = await readActualState(service);
  const policy = policyFor(d);
  const p = plan(d, state, policy);
  service.calls = [];
  const results = await applyPlan(p, {
    writer: service,
    desired: d,
    actual: state,
    policy,
    passwords: { record: (id, pw) => extra.recorded?.set(id, pw.reveal()), forget: (id) => extra.recorded?.delete(id) },
    onToken: async (name: string, token: SecretValue) => {
      extra.tokens?.set(name, token.reveal());
    },
  });
  return { plan: p, results };
}

describe('apply', () => {
  it('runs creates and updates before deletes, and reports every change', async () => {
    const s = new StoreService();
    s.seedUser('old');
    s.seedKey('ci', [1]);
    const d = desired({ sshUsers: [user('new', { password: secret('p') }), user('old', { ensure: 'absent' })], apikeys: [key('ci', { roles: [2] })] });
    const { results } = await syncOnce(s, d);
    expect(results.map((r) => `${r.action}:${r.key}:${r.status}`)).toEqual(['create:new:applied', 'delete:old:applied', 'update:ci:applied']);
    expect(s.calls.indexOf('deleteSshUser 100')).toBeGreaterThan(s.calls.indexOf('createSshUser new'));
    expect(s.calls.indexOf('deleteSshUser 100')).toBeGreaterThan(s.calls.indexOf('updateApikey 101'));
  });

  it("one item's failure does not stop the others", async () => {
    const s = new StoreService();
    s.before('createSshUser', () => {
      throw apiError('server_error');
    });
    const d = desired({ sshUsers: [user('a', { password: secret('p') }), user('b', { password: secret('p') })] });
    const { results } = await syncOnce(s, d);
    expect(results.map((r) => r.status).sort()).toEqual(['applied', 'failed']);
    expect(results.find((r) => r.status === 'failed')?.error).toBe('store server_error');
  });

  it('a 409 on create adopts the existing user and sets its declared password', async () => {
    const s = new StoreService();
    const recorded = new Map<number, string>();
    s.before('createSshUser', (svc) => {
      svc.seedUser('deploy', 'n1'); // created by someone else between listing and create
    });
    const d = desired({ sshUsers: [user('deploy', { password: secret('pw1') })] });
    const { results } = await syncOnce(s, d, { recorded });
    expect(results).toMatchObject([{ status: 'applied', id: 100, drift: expect.stringContaining('existed already as id 100') }]);
    expect(s.users.get(100)?.username).toBe('deploy');
    expect(s.hasPassword('deploy', 'pw1')).toBe(true);
    expect(recorded.get(100)).toBe('pw1');
    expect(s.users.size).toBe(1);
  });

  it('a lost create response is looked up first, so no duplicate apikey is created', async () => {
    const s = new StoreService();
    s.before('createApikey', () => 'commit-then-lose');
    const { results } = await syncOnce(s, desired({ apikeys: [key('billing', { roles: [3] })] }));
    expect(s.keys.size).toBe(1);
    expect(s.calls.filter((c) => c.startsWith('createApikey'))).toHaveLength(1);
    expect(results[0]).toMatchObject({ status: 'applied', drift: expect.stringContaining('adopted') });
  });

  it('a lost apikey create that is not listed is not sent again (it could still land); the next run creates it', async () => {
    const s = new StoreService();
    s.before('createApikey', () => {
      throw apiError('unknown_outcome');
    });
    const d = desired({ apikeys: [key('billing')] });
    const { results } = await syncOnce(s, d);
    expect(s.keys.size).toBe(0);
    expect(s.calls.filter((c) => c.startsWith('createApikey'))).toHaveLength(1);
    expect(results[0]).toMatchObject({ status: 'failed', error: expect.stringContaining('not sent again') });
    await syncOnce(s, d);
    expect([...s.keys.values()].map((k) => k.name)).toEqual(['billing']);
  });

  it('a lost SSH user create that is not listed is created again (a duplicate would get 409)', async () => {
    const s = new StoreService();
    s.before('createSshUser', () => {
      throw apiError('unknown_outcome');
    });
    const { results } = await syncOnce(s, desired({ sshUsers: [user('u', { password: secret('p') })] }));
    expect(results[0]).toMatchObject({ status: 'applied', drift: expect.stringContaining('created it again') });
    expect(s.users.size).toBe(1);
  });

  it('a lost create whose look-up fails (or is never sent) says it could not be looked up, not that it was', async () => {
    const s = new StoreService();
    s.before('createSshUser', (svc) => {
      // The re-read that would settle it fails: an interrupt kept it off the wire.
      svc.before('listSshUsers', () => {
        throw apiError('not_sent');
      });
      throw apiError('unknown_outcome');
    });
    const { results } = await syncOnce(s, desired({ sshUsers: [user('u', { password: secret('p') })] }));
    expect(results[0]).toMatchObject({ status: 'failed', drift: "the create's response was lost; it could not be looked up, so whether it was created is not known" });
    expect(results[0]!.drift).not.toContain('looked it up');
  });

  it('a 404 on an apikey delete leaves the SSH user with the same id its fingerprint', async () => {
    const s = new StoreService();
    const recorded = new Map<number, string>([[100, 'user-100-pw']]);
    const id = s.seedKey('old-key');
    expect(id).toBe(100);
    s.before('deleteApikey', (svc) => {
      svc.dropKey(id);
    });
    await syncOnce(s, desired({ apikeys: [key('old-key', { ensure: 'absent' })] }), { recorded });
    expect(recorded.get(100)).toBe('user-100-pw');
  });

  it('a create that waits for a delete is skipped when the delete fails, instead of adopting the user the file wants gone', async () => {
    const s = new StoreService();
    const id = s.seedUser('alice');
    s.before('deleteSshUser', () => {
      throw apiError('forbidden');
    });
    const { results } = await syncOnce(s, desired({ sshUsers: [user('x', { id, ensure: 'absent' }), user('alice', { password: secret('new') })] }));
    expect(results.map((r) => `${r.action}:${r.key}:${r.status}`).sort()).toEqual(['create:alice:skipped', 'delete:alice:failed']);
    expect(s.calls.filter((c) => c.startsWith('createSshUser'))).toEqual([]);
  });

  it('a user found after a 409 that a protect glob covers is left alone and reported skipped', async () => {
    const s = new StoreService();
    s.before('createSshUser', (svc) => {
      svc.seedUser('admin2');
    });
    const d = desired({ sshUsers: [user('admin2', { password: secret('mine') })], protect: { sshUsers: ['admin*'], apikeys: [] } });
    const { results } = await syncOnce(s, d);
    expect(results[0]).toMatchObject({ status: 'skipped', error: expect.stringContaining('protect') });
    expect(s.calls.filter((c) => c.startsWith('updateSshUser'))).toEqual([]);
  });

  it('a 404 on update creates the user again', async () => {
    const s = new StoreService();
    const id = s.seedUser('deploy', 'n2');
    s.before('updateSshUser', (svc) => {
      svc.dropUser(id);
    });
    const { results } = await syncOnce(s, desired({ sshUsers: [user('deploy', { password: secret('p') })] }));
    expect(results[0]).toMatchObject({ action: 'update', status: 'applied', drift: expect.stringContaining('created it again') });
    expect([...s.users.values()].map((u) => u.username)).toEqual(['deploy']);
  });

  it('a 404 on update without a declared password fails clearly', async () => {
    const s = new StoreService();
    const id = s.seedUser('deploy', 'n2');
    s.before('updateSshUser', (svc) => {
      svc.dropUser(id);
    });
    const { results } = await syncOnce(s, desired({ sshUsers: [user('deploy')] }));
    expect(results[0]).toMatchObject({ status: 'failed', error: expect.stringContaining('no password') });
  });

  it('a 404 on delete means it is already done', async () => {
    const s = new StoreService();
    const id = s.seedUser('gone');
    s.before('deleteSshUser', (svc) => {
      svc.dropUser(id);
    });
    const { results } = await syncOnce(s, desired({ sshUsers: [user('gone', { ensure: 'absent' })] }));
    expect(results[0]).toMatchObject({ status: 'applied', drift: 'was already deleted' });
  });

  it('drift is handled once: a second conflict fails the item instead of looping', async () => {
    const s = new StoreService();
    const id = s.seedUser('a');
    s.seedUser('taken');
    s.before('updateSshUser', () => {
      throw apiError('conflict');
    });
    s.before('updateSshUser', () => {
      throw apiError('conflict');
    });
    const { results } = await syncOnce(s, desired({ sshUsers: [user('a', { id, level: 'n2' })] }));
    expect(results[0]!.status).toBe('failed');
    expect(s.calls.filter((c) => c.startsWith('updateSshUser'))).toHaveLength(2);
  });

  it('orders rename chains so each name is free when it is taken', async () => {
    const s = new StoreService();
    const a = s.seedUser('a');
    const b = s.seedUser('b');
    const x = s.seedUser('x');
    // a -> b needs b -> c first; y -> x needs x deleted first.
    const d = desired({ sshUsers: [user('b', { id: a }), user('c', { id: b }), user('zz', { ensure: 'absent' }), user('x', { ensure: 'absent', id: x }), user('w', { password: secret('p') })] });
    const { results } = await syncOnce(s, d);
    expect(results.every((r) => r.status === 'applied')).toBe(true);
    expect(s.calls.indexOf(`updateSshUser ${b}`)).toBeLessThan(s.calls.indexOf(`updateSshUser ${a}`));
    expect([...s.users.values()].map((u) => u.username).sort()).toEqual(['b', 'c', 'w']);
  });

  it('skips a rename whose prerequisite failed', async () => {
    const s = new StoreService();
    const a = s.seedUser('a');
    const b = s.seedUser('b');
    s.before('updateSshUser', () => {
      throw apiError('server_error');
    });
    const { results } = await syncOnce(s, desired({ sshUsers: [user('b', { id: a }), user('c', { id: b })] }));
    expect(results.map((r) => `${r.key}:${r.status}`)).toEqual(['b:skipped', 'c:failed']);
  });

  it('records applied passwords and hands new tokens to the sink', async () => {
    const s = new StoreService();
    const recorded = new Map<number, string>();
    const tokens = new Map<string, string>();
    await syncOnce(s, desired({ sshUsers: [user('u', { password: secret('pw') })], apikeys: [key('k')] }), { recorded, tokens });
    expect([...recorded.values()]).toEqual(['pw']);
    expect(tokens.get('k')).toMatch(/^tok-/);
  });

  it('the run after a successful apply plans nothing', async () => {
    const s = new StoreService();
    s.seedUser('stray');
    const d = desired({ sshUsers: [user('u', { password: secret('pw') })], apikeys: [key('k', { roles: [1, 2] })], prune: { sshUsers: true, apikeys: true } });
    await syncOnce(s, d);
    const second = await syncOnce(s, d);
    expect(second.plan.changes).toEqual([]);
    expect(s.calls.filter((c) => !c.startsWith('list'))).toEqual([]);
  });
});

describe('an interrupt: a change none of whose writes was sent is not started, not failed', () => {
  const notSent = (path: string) => new ApiError('not_sent', `POST ${path}: not sent: interrupted (SIGINT)`, { method: 'POST', path, route: path, attempts: 0 });
  const interrupted = () => {
    const controller = new AbortController();
    controller.abort(new Error('interrupted (SIGINT)'));
    return controller.signal;
  };

  it('a create the client stopped in its queue (not_sent) is skipped and counted not started; a sent one stands', async () => {
    const s = new StoreService();
    const signal = interrupted();
    // Each hook runs once: the first create goes out, the second is stopped in the client's queue.
    s.before('createSshUser', () => undefined);
    s.before('createSshUser', () => {
      throw notSent('/api/sshusers');
    });
    const d = desired({ sshUsers: [user('a', { password: secret('p') }), user('b', { password: secret('p') })] });
    const { state } = await readActualState(s);
    const policy = policyFor(d);
    const results = await applyPlan(plan(d, state, policy), { writer: s, desired: d, actual: state, policy, signal: new AbortController().signal });
    expect(results.find((r) => r.key === 'a')).toMatchObject({ status: 'applied' });
    // The apply's own signal says why (here it did not fire: the client's stop did).
    expect(results.find((r) => r.key === 'b')).toEqual({ kind: 'sshUser', key: 'b', action: 'create', status: 'skipped', id: null, error: 'not started: the run was stopped', notStarted: true });
    // Started after the signal: not started, with the signal's reason.
    const after = await applyPlan(plan(d, state, policy), { writer: s, desired: d, actual: state, policy, signal });
    expect(after.map((r) => [r.status, r.notStarted, r.error])).toEqual([
      ['skipped', true, 'not started: interrupted (SIGINT)'],
      ['skipped', true, 'not started: interrupted (SIGINT)'],
    ]);
  });

  it('a delete whose read (the verified delete) was never sent is not started, and no DELETE goes out', async () => {
    const s = new StoreService();
    s.seedUser('old');
    s.before('fetchSshUser', () => {
      throw notSent('/api/sshusers/100');
    });
    const { results } = await syncOnce(s, desired({ sshUsers: [user('old', { ensure: 'absent' })] }));
    expect(results[0]).toMatchObject({ action: 'delete', status: 'skipped', notStarted: true });
    expect(s.calls.filter((c) => c.startsWith('deleteSshUser'))).toEqual([]);
  });

  it('a write answered (409) before the stop, whose drift re-read was then never sent, is a failure: the service refused it', async () => {
    const s = new StoreService();
    s.before('createSshUser', (svc) => {
      svc.seedUser('deploy');
    });
    // The first listing (the plan's) is done; the re-read after the 409 is stopped.
    s.before('listSshUsers', () => undefined);
    s.before('listSshUsers', () => {
      throw notSent('/api/sshusers');
    });
    const { results } = await syncOnce(s, desired({ sshUsers: [user('deploy', { password: secret('p') })] }));
    expect(results[0]).toMatchObject({ status: 'failed' });
    expect(results[0]!.notStarted).toBeUndefined();
  });
});
