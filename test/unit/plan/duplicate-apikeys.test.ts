import { describe, expect, it } from 'vitest';
import { checkSafety, plan } from '../../../src/plan/index.js';
import { actual, desired, key, policyFor } from '../../helpers/plan-fixtures.js';

const apikey = (id: number, name: string, roles: number[] = []) => ({ id, name, superuser: false, roles });

describe('duplicate apikeys left by two writers: a reviewable way out', () => {
  const twins = actual([], [apikey(12, 'ci'), apikey(7, 'ci'), apikey(30, 'ci'), apikey(40, 'other')]);

  it('without the flag, the name is an ambiguity to resolve by pinning an id; nothing is deleted', () => {
    const d = desired({ apikeys: [key('ci')] });
    const p = plan(d, twins, policyFor(d));
    expect(p.problems).toMatchObject([{ code: 'ambiguous', key: 'ci' }]);
    expect(p.changes).toEqual([]);
  });

  it('with --delete-duplicate-apikeys, the oldest (lowest id) is kept and the others are deleted, each saying which is kept', () => {
    const d = desired({ apikeys: [key('ci')] });
    const p = plan(d, twins, policyFor(d, { deleteDuplicateApikeys: true }));
    expect(p.problems).toEqual([]);
    expect(p.changes.map((c) => [c.action, c.id, c.reason])).toEqual([
      ['delete', 12, 'duplicate of id 7, which is kept'],
      ['delete', 30, 'duplicate of id 7, which is kept'],
    ]);
    expect(p.unmanaged).toEqual([{ kind: 'apikey', key: 'other', id: 40 }]);
  });

  it('a pinned id is the one kept, whatever its age', () => {
    const d = desired({ apikeys: [key('ci', { id: 30 })] });
    const p = plan(d, twins, policyFor(d, { deleteDuplicateApikeys: true }));
    expect(p.changes.map((c) => [c.action, c.id])).toEqual([
      ['delete', 7],
      ['delete', 12],
    ]);
  });

  it('two declarations of one name, each pinned, keep both; only unclaimed twins go', () => {
    const d = desired({ apikeys: [key('ci', { id: 7 }), key('ci', { id: 30 })] });
    const p = plan(d, twins, policyFor(d, { deleteDuplicateApikeys: true }));
    expect(p.changes.map((c) => [c.action, c.id])).toEqual([['delete', 12]]);
  });

  it('the deletes count against the deletion budget, and a protected twin is kept and listed', () => {
    const d = desired({ apikeys: [key('ci')], protect: { sshUsers: [], apikeys: [] } });
    const p = plan(d, twins, policyFor(d, { deleteDuplicateApikeys: true }));
    expect(checkSafety(p, d, policyFor(d), { maxDeletes: 1, allowEmptyPrune: false })?.code).toBe('deletion_budget');
    const guarded = desired({ apikeys: [key('ci')], protect: { sshUsers: [], apikeys: ['ci'] } });
    const q = plan(guarded, actual([], [apikey(7, 'ci'), apikey(12, 'ci')]), policyFor(guarded, { deleteDuplicateApikeys: true }));
    expect(q.changes).toEqual([]);
    expect(q.protected).toEqual([{ kind: 'apikey', key: 'ci', id: 12 }]);
  });

  it('usernames are unique: the flag changes nothing for SSH users', () => {
    const d = desired({ sshUsers: [] });
    const p = plan(d, actual([{ id: 1, username: 'a', level: 'n1' }]), policyFor(d, { deleteDuplicateApikeys: true }));
    expect(p.changes).toEqual([]);
  });
});
