import { describe, expect, it } from 'vitest';
import { itemSelection } from '../../../src/apply/index.js';
import { UsageError } from '../../../src/errors.js';
import type { PlanPolicy } from '../../../src/plan/index.js';
import { plan } from '../../../src/plan/index.js';
import { plan as planAll } from '../../../src/plan/plan.js';
import { actual, desired, key, policyFor, secret, user } from '../../helpers/plan-fixtures.js';

const select = (only: string[] = [], exclude: string[] = [], replace: string[] = []): Pick<PlanPolicy, 'selection'> => ({ selection: itemSelection({ only, exclude, replace })! });

const d = desired({
  sshUsers: [user('alice', { password: secret('a') }), user('bob', { level: 'n2' })],
  apikeys: [key('ci-build', { roles: [1] }), key('billing', { roles: [2] })],
  prune: { sshUsers: true, apikeys: true },
});
const a = actual(
  [
    { id: 1, username: 'alice', level: 'n1' },
    { id: 2, username: 'bob', level: 'n1' },
    { id: 3, username: 'stray', level: 'n1' },
  ],
  [
    { id: 10, name: 'ci-build', superuser: false, roles: [3] },
    { id: 11, name: 'ci-old', superuser: false, roles: [] },
    { id: 12, name: 'billing', superuser: false, roles: [3] },
  ],
);

describe('--only / --exclude: a filter of the whole plan', () => {
  it('keeps exactly the full plan changes of the selected items, prune included, and says what it left out', () => {
    const full = planAll(d, a, policyFor(d));
    const p = plan(d, a, policyFor(d, select(['apikey:ci-*'])));
    expect(p.changes).toEqual(full.changes.filter((c) => c.kind === 'apikey' && c.key.startsWith('ci-')));
    expect(p.changes.map((c) => `${c.action} ${c.key}`)).toEqual(['update ci-build', 'delete ci-old']);
    expect(p.selection).toEqual({ only: ['apikey:ci-*'], exclude: [], omitted: { declared: 3, remote: 4 } });
    expect(p.unchanged).toBe(0);
    expect(p.notes.at(-1)).toContain('Partial plan (--only apikey:ci-*): 3 declared and 4 remote items were left out');
  });

  it('never adds a change: every selection gives a subset of the full plan (differential over several selections)', () => {
    const full = JSON.stringify(planAll(d, a, policyFor(d)).changes);
    for (const s of [['sshUser:*'], ['apikey:*'], ['sshUser#3'], ['apikey#11', 'sshUser:bob']]) {
      for (const c of plan(d, a, policyFor(d, select(s))).changes) expect(full).toContain(JSON.stringify(c));
    }
    const excluded = plan(d, a, policyFor(d, select([], ['sshUser:stray', 'apikey#11'])));
    expect(excluded.changes.some((c) => c.id === 3 || c.id === 11)).toBe(false);
    expect(excluded.changes.length).toBe(planAll(d, a, policyFor(d)).changes.length - 2);
  });

  it('counts unchanged among the selected declarations only', () => {
    const clean = actual([{ id: 1, username: 'alice', level: 'n1' }], [{ id: 10, name: 'ci-build', superuser: false, roles: [1] }]);
    const small = desired({ sshUsers: [user('alice')], apikeys: [key('ci-build', { roles: [1] })] });
    expect(plan(small, clean, policyFor(small, select(['apikey:*']))).unchanged).toBe(1);
  });

  it('a rename by id is selected by either name', () => {
    const pinned = desired({ apikeys: [key('ci-new', { id: 10, roles: [3] })] });
    for (const name of ['apikey:ci-new', 'apikey:ci-build', 'apikey#10']) {
      expect(plan(pinned, a, policyFor(pinned, select([name]))).changes.map((c) => c.key)).toEqual(['ci-new']);
    }
  });

  it('an address that names nothing declared or remote is a UsageError naming it', () => {
    expect(() => plan(d, a, policyFor(d, select(['apikey:nope'])))).toThrowError(new UsageError('--only apikey:nope matches no declared and no remote item', 'address_unmatched'));
    expect(() => plan(d, a, policyFor(d, select([], ['sshUser#99'])))).toThrowError(/--exclude sshUser#99 matches no declared and no remote item/);
    // A fleet's selection: no error, the target simply plans nothing for it.
    const lenient = { selection: itemSelection({ only: ['apikey:nope'], exclude: [], replace: [], unmatchedAllowed: true })! };
    expect(plan(d, a, policyFor(d, lenient)).changes).toEqual([]);
  });

  it('without a selection the plan is the diff engine\'s own', () => {
    expect(plan(d, a, policyFor(d))).toEqual(planAll(d, a, policyFor(d)));
  });
});

describe('--replace', () => {
  it('an SSH user: its password joins the update already planned, or makes one', () => {
    const withLevel = plan(d, a, policyFor(d, select([], [], ['sshUser:alice'])));
    expect(withLevel.changes.filter((c) => c.kind === 'sshUser' && c.action === 'update')).toEqual([
      expect.objectContaining({ key: 'alice', id: 1, fields: { password: { before: '(sensitive)', after: '(sensitive)' } }, reason: 'replace requested' }),
      expect.objectContaining({ key: 'bob', id: 2 }),
    ]);
    const both = desired({ sshUsers: [user('bob', { level: 'n2', password: secret('b') })] });
    const merged = plan(both, a, policyFor(both, select([], [], ['sshUser:bob'])));
    expect(merged.changes.filter((c) => c.action === 'update')).toEqual([
      expect.objectContaining({ key: 'bob', fields: { level: { before: 'n1', after: 'n2' }, password: { before: '(sensitive)', after: '(sensitive)' } } }),
    ]);
  });

  it('an apikey: the successor create (replaces the old id) and the old key delete (replaced), in place of its update', () => {
    const p = plan(d, a, policyFor(d, select([], [], ['apikey:ci-build'])));
    const ci = p.changes.filter((c) => c.key === 'ci-build');
    expect(ci).toEqual([
      expect.objectContaining({ action: 'create', id: null, replaces: 10, fields: expect.objectContaining({ roles: { before: null, after: [1] } }) }),
      expect.objectContaining({ action: 'delete', id: 10, replaced: true }),
    ]);
  });

  it('refuses what cannot be replaced, naming the address: undeclared, absent, pinned, no password, outside the selection', () => {
    const absent = desired({ apikeys: [key('ci-old', { ensure: 'absent' }), key('pinned', { id: 12 })], sshUsers: [user('bob')] });
    expect(() => plan(absent, a, policyFor(absent, select([], [], ['apikey:stray'])))).toThrowError(/--replace apikey:stray names no item the file declares/);
    expect(() => plan(absent, a, policyFor(absent, select([], [], ['apikey:ci-old'])))).toThrowError(/`ensure: absent`/);
    expect(() => plan(absent, a, policyFor(absent, select([], [], ['apikey:pinned'])))).toThrowError(/pins `id: 12`/);
    expect(() => plan(absent, a, policyFor(absent, select([], [], ['sshUser:bob'])))).toThrowError(/declares no password/);
    expect(() => plan(d, a, policyFor(d, select(['sshUser:*'], [], ['apikey:ci-build'])))).toThrowError(/left out by --only\/--exclude/);
  });

  it('amsync rotate ADDR: the refusals and the partial plan name the command the user ran, never --replace or --only', () => {
    const rotate = (addr: string): Pick<PlanPolicy, 'selection'> => ({ selection: itemSelection({ only: [addr], exclude: [], replace: [addr], command: 'rotate' })! });
    const absent = desired({ apikeys: [key('ci-old', { ensure: 'absent' }), key('pinned', { id: 12 })], sshUsers: [user('bob')] });
    const refusal = (dd: typeof d, addr: string) => {
      try {
        plan(dd, a, policyFor(dd, rotate(addr)));
      } catch (error) {
        expect(error).toBeInstanceOf(UsageError);
        return (error as UsageError).message;
      }
      throw new Error(`${addr} was not refused`);
    };
    expect(refusal(absent, 'apikey:nope')).toBe('rotate apikey:nope names no item the file declares: only a declared item can be rotated');
    expect(refusal(absent, 'apikey:ci-old')).toMatch(/^rotate apikey:ci-old: apikey "ci-old" is declared `ensure: absent`: there is nothing to rotate$/);
    expect(refusal(absent, 'apikey:pinned')).toMatch(/^rotate apikey:pinned: .* remove the pin to rotate it$/);
    expect(refusal(absent, 'sshUser:bob')).toMatch(/^rotate sshUser:bob: SSH user "bob" declares no password/);
    const p = plan(d, a, policyFor(d, rotate('apikey:ci-build')));
    expect(p.notes.at(-1)).toBe('Partial plan (rotate apikey:ci-build): 3 declared and 5 remote items were left out and will not be changed; amsync sync plans the whole file.');
    for (const message of [refusal(absent, 'apikey:nope'), p.notes.at(-1)!]) expect(message).not.toMatch(/--replace|--only/);
  });
});

// Issue 29: a partial plan reports only the selected items, observed drift and ignored fields included.
describe('--only / --exclude and observed items, ignored fields', () => {
  const od = desired({
    apikeys: [key('ci-build', { roles: [1], mode: 'observe' }), key('billing', { roles: [2], mode: 'observe', ignore: ['superuser'] }), key('ci-test', { roles: [1], ignore: ['superuser'] })],
    prune: { sshUsers: false, apikeys: false },
  });
  const oa = actual(
    [],
    [
      { id: 10, name: 'ci-build', superuser: false, roles: [3] },
      { id: 12, name: 'billing', superuser: false, roles: [3] },
      { id: 13, name: 'ci-test', superuser: false, roles: [1] },
    ],
  );

  it('observed drift of items outside the selection is not reported; inside it, it is', () => {
    const full = plan(od, oa, policyFor(od));
    expect(full.observed?.map((c) => c.key)).toEqual(['billing', 'ci-build']);
    expect(plan(od, oa, policyFor(od, select(['apikey:ci-*']))).observed?.map((c) => c.key)).toEqual(['ci-build']);
    expect(plan(od, oa, policyFor(od, select([], ['apikey:billing']))).observed?.map((c) => c.key)).toEqual(['ci-build']);
    // None left: no observed field at all, as for a plan without observed drift.
    expect(plan(od, oa, policyFor(od, select(['apikey:ci-test'])))).not.toHaveProperty('observed');
  });

  it('the ignored fields listed are those of the selected items', () => {
    expect(plan(od, oa, policyFor(od)).ignored).toEqual([{ kind: 'apikey', field: 'superuser', keys: ['billing', 'ci-test'] }]);
    expect(plan(od, oa, policyFor(od, select(['apikey:ci-*']))).ignored).toEqual([{ kind: 'apikey', field: 'superuser', keys: ['ci-test'] }]);
    expect(plan(od, oa, policyFor(od, select(['apikey:ci-build'])))).not.toHaveProperty('ignored');
    // A field every item ignores (a top-level ignore:, folded into each item) stays `all`.
    const kindWide = desired({ apikeys: [key('ci-build', { roles: [1], ignore: ['roles'] }), key('billing', { roles: [2], ignore: ['roles'] })] });
    expect(plan(kindWide, oa, policyFor(kindWide, select(['apikey:billing']))).ignored).toEqual([{ kind: 'apikey', field: 'roles', keys: 'all' }]);
  });
});
