import { describe, expect, it } from 'vitest';
import { checkSafety, plan, summarize } from '../../../src/plan/index.js';
import { actual, desired, key, policyFor, secret, user } from '../../helpers/plan-fixtures.js';

describe('plan: SSH users', () => {
  it('creates a declared user that does not exist, with its password shown as (sensitive)', () => {
    const d = desired({ sshUsers: [user('deploy', { password: secret('pw') })] });
    const p = plan(d, actual(), policyFor(d));
    expect(p.changes).toEqual([
      {
        kind: 'sshUser', action: 'create', key: 'deploy', id: null,
        fields: { username: { before: null, after: 'deploy' }, level: { before: null, after: 'n1' }, password: { before: null, after: '(sensitive)' } },
      },
    ]);
    expect(JSON.stringify(p)).not.toContain('pw"');
  });

  it('reports a missing password instead of creating a user without one', () => {
    const d = desired({ sshUsers: [user('deploy')] });
    const p = plan(d, actual(), policyFor(d));
    expect(p.changes).toEqual([]);
    expect(p.problems).toMatchObject([{ kind: 'sshUser', key: 'deploy', code: 'missing_password' }]);
  });

  it('leaves the password of an existing user alone when the file gives none', () => {
    const d = desired({ sshUsers: [user('deploy')] });
    const p = plan(d, actual([{ id: 1, username: 'deploy', level: 'n1' }]), policyFor(d));
    expect(p.changes).toEqual([]);
    expect(p.unchanged).toBe(1);
  });

  it('updates the level in place', () => {
    const d = desired({ sshUsers: [user('deploy', { level: 'n2' })] });
    const p = plan(d, actual([{ id: 1, username: 'deploy', level: 'n1' }]), policyFor(d));
    expect(p.changes).toMatchObject([{ action: 'update', id: 1, fields: { level: { before: 'n1', after: 'n2' } } }]);
  });

  it('plans a password update when its fingerprint differs from the last applied one', () => {
    const d = desired({ sshUsers: [user('deploy', { password: secret('new') })] });
    const a = actual([{ id: 1, username: 'deploy', level: 'n1' }]);
    const changed = plan(d, a, policyFor(d), { desired: new Map([['deploy', 'fp-new']]), applied: new Map([['1', 'fp-old']]) });
    expect(changed.changes).toMatchObject([{ action: 'update', reason: 'password changed', fields: { password: { before: '(sensitive)', after: '(sensitive)' } } }]);
    const same = plan(d, a, policyFor(d), { desired: new Map([['deploy', 'fp']]), applied: new Map([['1', 'fp']]) });
    expect(same.changes).toEqual([]);
  });

  it('with no state file sets passwords on create only, and says so', () => {
    const d = desired({ sshUsers: [user('deploy', { password: secret('x') })] });
    const p = plan(d, actual([{ id: 1, username: 'deploy', level: 'n1' }]), policyFor(d, { passwords: { mode: 'create-only' } }));
    expect(p.changes).toEqual([]);
    expect(p.notes.join(' ')).toMatch(/No state file/);
  });

  it('says when an existing user has a password amsync has not set yet', () => {
    const d = desired({ sshUsers: [user('deploy', { password: secret('x') })] });
    const p = plan(d, actual([{ id: 1, username: 'deploy', level: 'n1' }]), policyFor(d));
    expect(p.changes).toEqual([]);
    expect(p.notes.join(' ')).toMatch(/--rotate-passwords/);
  });

  it('--rotate-passwords sets every declared password', () => {
    const d = desired({ sshUsers: [user('a', { password: secret('x') }), user('b')] });
    const p = plan(d, actual([{ id: 1, username: 'a', level: 'n1' }, { id: 2, username: 'b', level: 'n1' }]), policyFor(d, { passwords: { mode: 'rotate' } }));
    expect(p.changes.map((c) => c.key)).toEqual(['a']);
  });

  it('deletes a user marked ensure: absent, and counts an absent one that is already gone as unchanged', () => {
    const d = desired({ sshUsers: [user('old', { ensure: 'absent' }), user('gone', { ensure: 'absent' })] });
    const p = plan(d, actual([{ id: 9, username: 'old', level: 'n1' }]), policyFor(d));
    expect(p.changes).toMatchObject([{ action: 'delete', key: 'old', id: 9 }]);
    expect(p.unchanged).toBe(1);
  });

  it('renames by pinned id', () => {
    const d = desired({ sshUsers: [user('new-name', { id: 4 })] });
    const p = plan(d, actual([{ id: 4, username: 'old-name', level: 'n1' }]), policyFor(d));
    expect(p.changes).toMatchObject([{ action: 'update', key: 'new-name', id: 4, reason: 'rename by id', fields: { username: { before: 'old-name', after: 'new-name' } } }]);
  });

  it('refuses a rename onto a username another user holds', () => {
    const d = desired({ sshUsers: [user('taken', { id: 4 })] });
    const p = plan(d, actual([{ id: 4, username: 'a', level: 'n1' }, { id: 5, username: 'taken', level: 'n1' }]), policyFor(d));
    expect(p.problems).toMatchObject([{ code: 'identity_conflict' }]);
    expect(p.changes).toEqual([]);
  });

  it('reports a pinned id that does not exist', () => {
    const d = desired({ sshUsers: [user('x', { id: 77, password: secret('p') })] });
    const p = plan(d, actual(), policyFor(d));
    expect(p.problems).toMatchObject([{ code: 'id_not_found', key: 'x' }]);
  });
});

describe('plan: apikeys', () => {
  it('compares roles as sets and defaults superuser to false', () => {
    const d = desired({ apikeys: [key('ci', { roles: [7, 3] })] });
    const same = plan(d, actual([], [{ id: 1, name: 'ci', superuser: false, roles: [3, 7] }]), policyFor(d));
    expect(same.changes).toEqual([]);
    const su = plan(d, actual([], [{ id: 1, name: 'ci', superuser: true, roles: [3, 7] }]), policyFor(d));
    expect(su.changes).toMatchObject([{ action: 'update', fields: { superuser: { before: true, after: false } } }]);
  });

  it('updates roles to exactly the declared set', () => {
    const d = desired({ apikeys: [key('ci', { roles: [3, 7] })] });
    const p = plan(d, actual([], [{ id: 1, name: 'ci', superuser: false, roles: [1] }]), policyFor(d));
    expect(p.changes).toMatchObject([{ fields: { roles: { before: [1], after: [3, 7] } } }]);
  });

  it('two remote apikeys with one declared name is an ambiguity error for that item, and neither is pruned', () => {
    const d = desired({ apikeys: [key('dup')], prune: { sshUsers: false, apikeys: true } });
    const p = plan(d, actual([], [{ id: 1, name: 'dup', superuser: false, roles: [] }, { id: 2, name: 'dup', superuser: false, roles: [] }]), policyFor(d));
    expect(p.problems).toMatchObject([{ code: 'ambiguous', key: 'dup' }]);
    expect(p.changes).toEqual([]);
  });

  it('a pinned id resolves the ambiguity; the other duplicate is unmanaged', () => {
    const d = desired({ apikeys: [key('dup', { id: 2, superuser: true })] });
    const p = plan(d, actual([], [{ id: 1, name: 'dup', superuser: false, roles: [] }, { id: 2, name: 'dup', superuser: false, roles: [] }]), policyFor(d));
    expect(p.problems).toEqual([]);
    expect(p.changes).toMatchObject([{ action: 'update', id: 2 }]);
    expect(p.unmanaged).toEqual([{ kind: 'apikey', key: 'dup', id: 1 }]);
  });
});

describe('plan: prune, unmanaged and protect', () => {
  const remote = actual(
    [{ id: 1, username: 'root', level: 'n1' }, { id: 2, username: 'admin-bob', level: 'n1' }, { id: 3, username: 'stray', level: 'n1' }],
    [{ id: 9, name: 'manual-key', superuser: false, roles: [] }],
  );

  it('reports undeclared remote items as unmanaged when prune is off', () => {
    const d = desired({ sshUsers: [user('deploy', { password: secret('p') })] });
    const p = plan(d, remote, policyFor(d));
    expect(p.unmanaged.map((u) => u.key)).toEqual(['admin-bob', 'root', 'stray', 'manual-key']);
    expect(summarize(p)).toEqual({ create: 1, update: 0, delete: 0, unchanged: 0, unmanaged: 4 });
  });

  it('deletes undeclared items under prune, except protected ones', () => {
    const d = desired({
      sshUsers: [user('deploy', { password: secret('p') })],
      prune: { sshUsers: true, apikeys: false },
      protect: { sshUsers: ['root', 'admin*'], apikeys: [] },
    });
    const p = plan(d, remote, policyFor(d));
    expect(p.changes.filter((c) => c.action === 'delete').map((c) => c.key)).toEqual(['stray']);
    expect(p.protected.map((x) => x.key)).toEqual(['admin-bob', 'root']);
    expect(p.unmanaged.map((u) => u.key)).toEqual(['manual-key']);
  });

  it('never changes a protected item, even when declared differently', () => {
    const d = desired({ sshUsers: [user('root', { level: 'n9' }), user('admin-x', { ensure: 'absent' })], protect: { sshUsers: ['root', 'admin*'], apikeys: [] } });
    const p = plan(d, actual([{ id: 1, username: 'root', level: 'n1' }, { id: 2, username: 'admin-x', level: 'n1' }]), policyFor(d));
    expect(p.changes).toEqual([]);
    expect(p.protected.map((x) => x.key)).toEqual(['admin-x', 'root']);
  });

  it('orders changes by kind, then key', () => {
    const d = desired({ sshUsers: [user('b', { password: secret('p') }), user('a', { password: secret('p') })], apikeys: [key('z'), key('c')] });
    const p = plan(d, actual(), policyFor(d));
    expect(p.changes.map((c) => `${c.kind}:${c.key}`)).toEqual(['sshUser:a', 'sshUser:b', 'apikey:c', 'apikey:z']);
  });

  it('counts an item listed twice once', () => {
    const d = desired({ prune: { sshUsers: true, apikeys: false } });
    const p = plan(d, actual([{ id: 3, username: 'x', level: 'n1' }, { id: 3, username: 'x', level: 'n1' }]), policyFor(d));
    expect(p.changes).toHaveLength(1);
  });
});

describe('safety guards', () => {
  const many = Array.from({ length: 12 }, (_, i) => ({ id: i + 1, username: `u${i}`, level: 'n1' }));

  it('refuses more deletes than the deletion budget, saying how to raise it', () => {
    const d = desired({ sshUsers: [user('keep', { password: secret('p') })], prune: { sshUsers: true, apikeys: false } });
    const p = plan(d, actual(many), policyFor(d));
    const refusal = checkSafety(p, d, policyFor(d), { maxDeletes: 10, allowEmptyPrune: false });
    expect(refusal?.code).toBe('deletion_budget');
    expect(refusal?.message).toMatch(/--max-deletes 12/);
    expect(checkSafety(p, d, policyFor(d), { maxDeletes: 12, allowEmptyPrune: false })).toBeUndefined();
  });

  it('refuses to prune a kind the file declares nothing of, unless allowed', () => {
    const d = desired({ prune: { sshUsers: true, apikeys: false } });
    const p = plan(d, actual(many.slice(0, 2)), policyFor(d));
    expect(checkSafety(p, d, policyFor(d), { maxDeletes: 10, allowEmptyPrune: false })?.code).toBe('empty_prune');
    expect(checkSafety(p, d, policyFor(d), { maxDeletes: 10, allowEmptyPrune: true })).toBeUndefined();
  });

  it('does not refuse an empty prune when there is nothing to delete', () => {
    const d = desired({ prune: { sshUsers: true, apikeys: true } });
    const p = plan(d, actual(), policyFor(d));
    expect(checkSafety(p, d, policyFor(d), { maxDeletes: 10, allowEmptyPrune: false })).toBeUndefined();
  });
});

describe('plan: renames with unique usernames', () => {
  it('reports a swap, which no order of calls can apply', () => {
    const d = desired({ sshUsers: [user('b', { id: 1 }), user('a', { id: 2 })] });
    const p = plan(d, actual([{ id: 1, username: 'a', level: 'n1' }, { id: 2, username: 'b', level: 'n1' }]), policyFor(d));
    expect(p.changes).toEqual([]);
    expect(p.problems.map((x) => x.code)).toEqual(['identity_conflict', 'identity_conflict']);
    expect(p.problems.some((x) => /cycle/.test(x.message))).toBe(true);
  });

  it('allows a rename onto a name another rename frees in the same run', () => {
    const d = desired({ sshUsers: [user('b', { id: 1 }), user('c', { id: 2 })] });
    const p = plan(d, actual([{ id: 1, username: 'a', level: 'n1' }, { id: 2, username: 'b', level: 'n1' }]), policyFor(d));
    expect(p.problems).toEqual([]);
    expect(p.changes.map((c) => `${c.id}:${c.key}`)).toEqual(['1:b', '2:c']);
  });

  it('allows a rename onto the name of a user deleted in the same run', () => {
    const d = desired({ sshUsers: [user('a', { id: 2 }), user('x', { ensure: 'absent' })] });
    const p = plan(d, actual([{ id: 1, username: 'x', level: 'n1' }, { id: 2, username: 'y', level: 'n1' }]), policyFor(d));
    expect(p.problems).toEqual([]);
    const d2 = desired({ sshUsers: [user('x', { id: 2 })], prune: { sshUsers: true, apikeys: false } });
    const p2 = plan(d2, actual([{ id: 1, username: 'x', level: 'n1' }, { id: 2, username: 'y', level: 'n1' }]), policyFor(d2));
    expect(p2.problems).toEqual([]);
    expect(p2.changes.map((c) => c.action).sort()).toEqual(['delete', 'update']);
  });

  it('refuses to create a user whose name a pinned rename leaves in place', () => {
    const d = desired({ sshUsers: [user('bob', { password: secret('p') }), user('alice', { id: 2 })] });
    const p = plan(d, actual([{ id: 1, username: 'alice', level: 'n1' }, { id: 2, username: 'bob', level: 'n1' }]), policyFor(d));
    expect(p.changes).toEqual([]);
    expect(p.problems.map((x) => `${x.key}:${x.code}`)).toEqual(['alice:identity_conflict', 'bob:identity_conflict']);
  });
});

describe('review regressions', () => {
  it('a mistyped pinned id never lets prune delete the item the file names', () => {
    const d = desired({ sshUsers: [user('deploy', { id: 43 })], prune: { sshUsers: true, apikeys: false } });
    const p = plan(d, actual([{ id: 42, username: 'deploy', level: 'n1' }, { id: 7, username: 'stray', level: 'n1' }]), policyFor(d));
    expect(p.problems).toMatchObject([{ code: 'id_not_found', key: 'deploy' }]);
    expect(p.changes.map((c) => `${c.action}:${c.key}`)).toEqual(['delete:stray']);
  });

  it('a file with only ensure: absent items counts as empty for the empty-prune guard', () => {
    const d = desired({ sshUsers: [user('old', { ensure: 'absent' })], prune: { sshUsers: true, apikeys: false } });
    const p = plan(d, actual([{ id: 1, username: 'a', level: 'n1' }, { id: 2, username: 'b', level: 'n1' }]), policyFor(d));
    expect(checkSafety(p, d, policyFor(d), { maxDeletes: 10, allowEmptyPrune: false })?.code).toBe('empty_prune');
  });
});
