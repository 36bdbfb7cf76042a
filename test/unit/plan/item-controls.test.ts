import { describe, expect, it } from 'vitest';
import { plan } from '../../../src/plan/index.js';
import { parseSavedPlan, serialiseSavedPlan, toSavedPlan } from '../../../src/saved-plan/index.js';
import { actual, desired, key, policyFor, secret, user } from '../../helpers/plan-fixtures.js';

describe('renamedFrom (DESIGN.md §3, turn 3)', () => {
  it('renames the one item carrying a former name on its id, only when none carries the new name', () => {
    const d = desired({ sshUsers: [user('deploy', { renamedFrom: ['old-deploy'] })], apikeys: [key('ci-new', { renamedFrom: ['ci-old'] })] });
    const p = plan(d, actual([{ id: 3, username: 'old-deploy', level: 'n1' }], [{ id: 9, name: 'ci-old', superuser: false, roles: [] }]), policyFor(d));
    expect(p.changes.map((c) => [c.kind, c.action, c.key, c.id, c.renamedFrom, c.reason])).toEqual([
      ['sshUser', 'update', 'deploy', 3, 'old-deploy', undefined],
      ['apikey', 'update', 'ci-new', 9, 'ci-old', undefined],
    ]);
    // The new name exists already: it is the item; the former one is left as it is (unmanaged).
    const both = plan(d, actual([{ id: 3, username: 'old-deploy', level: 'n1' }, { id: 4, username: 'deploy', level: 'n1' }]), policyFor(d));
    expect(both.changes.filter((c) => c.kind === 'sshUser')).toEqual([]);
    expect(both.unmanaged.map((u) => u.key)).toContain('old-deploy');
  });

  it('two remote apikeys carrying the former name are an ambiguity, never a guess', () => {
    const d = desired({ apikeys: [key('ci-new', { renamedFrom: ['ci-old'] })] });
    const p = plan(d, actual([], [{ id: 1, name: 'ci-old', superuser: false, roles: [] }, { id: 2, name: 'ci-old', superuser: false, roles: [] }]), policyFor(d, { prune: { sshUsers: true, apikeys: true } }));
    expect(p.problems.map((x) => x.code)).toEqual(['ambiguous']);
    expect(p.changes).toEqual([]);
  });
});

describe('ignore', () => {
  it('an ignored field is never updated, a rotated password included; the header lists it', () => {
    const d = desired({ sshUsers: [user('alice', { password: secret('pw'), level: 'n2', ignore: ['level', 'password'] }), user('bob', { password: secret('pw') })] });
    const p = plan(d, actual([{ id: 1, username: 'alice', level: 'n1' }, { id: 2, username: 'bob', level: 'n1' }]), policyFor(d, { passwords: { mode: 'rotate' } }));
    expect(p.changes.map((c) => c.key)).toEqual(['bob']);
    expect(p.ignored).toEqual([
      { kind: 'sshUser', field: 'level', keys: ['alice'] },
      { kind: 'sshUser', field: 'password', keys: ['alice'] },
    ]);
  });

  it('a plan of a file without the new keys has none of the new fields', () => {
    const d = desired({ apikeys: [key('ci')] });
    const p = plan(d, actual(), policyFor(d));
    expect(Object.keys(p)).toEqual(['changes', 'unchanged', 'unmanaged', 'protected', 'problems', 'notes']);
  });
});

describe('observe', () => {
  it('a target observed as a whole: its drift and its prune deletes are reported, none planned', () => {
    const d = desired({ apikeys: [key('ci', { roles: [1] })], prune: { sshUsers: true, apikeys: true } });
    const a = actual([{ id: 5, username: 'stray', level: 'n1' }], [{ id: 9, name: 'ci', superuser: false, roles: [2] }]);
    const p = plan(d, a, policyFor(d, { prune: { sshUsers: true, apikeys: true }, observe: true }));
    expect(p.changes).toEqual([]);
    expect(p.observed?.map((c) => [c.action, c.key])).toEqual([
      ['delete', 'stray'],
      ['update', 'ci'],
    ]);
  });

  it('an observed user missing on the service is reported as a create it would need, not as a missing password', () => {
    const d = desired({ sshUsers: [user('ghost', { mode: 'observe' })] });
    const p = plan(d, actual(), policyFor(d));
    expect(p.problems).toEqual([]);
    expect(p.observed?.map((c) => [c.action, c.key])).toEqual([['create', 'ghost']]);
  });
});

describe('saved plans carry renames, observed items and ignored fields', () => {
  it('round-trips them through the file format', () => {
    const d = desired({ apikeys: [key('ci-new', { renamedFrom: ['ci-old'], ignore: ['roles'] }), key('w', { mode: 'observe', superuser: true })] });
    const a = actual([], [{ id: 9, name: 'ci-old', superuser: false, roles: [3] }, { id: 10, name: 'w', superuser: false, roles: [] }]);
    const p = plan(d, a, policyFor(d));
    const saved = toSavedPlan({
      amsyncVersion: '0.0.0',
      createdAt: '2026-01-01T00:00:00.000Z',
      desiredFile: 'access.yaml',
      desiredFileHash: '0'.repeat(64),
      serviceUrl: 'http://127.0.0.1:1',
      settings: { prune: { sshUsers: false, apikeys: false }, rotatePasswords: false, passwordMode: 'create-only', allowEmptyPrune: false, maxDeletes: 10, observe: true },
      actualFingerprint: '0'.repeat(64),
      plan: p,
      passwords: [],
      actual: a,
    });
    const back = parseSavedPlan(serialiseSavedPlan(saved), 'plan.json');
    expect(back.plan.changes[0]).toMatchObject({ key: 'ci-new', renamedFrom: 'ci-old', fields: { name: { before: 'ci-old', after: 'ci-new' } } });
    expect(back.plan.observed?.map((c) => c.key)).toEqual(['w']);
    expect(back.plan.ignored).toEqual([{ kind: 'apikey', field: 'roles', keys: ['ci-new'] }]);
    expect(back.settings.observe).toBe(true);
  });
});
