import { describe, expect, it } from 'vitest';
import { checkSafety, nextRotationAt, noFingerprints, plan } from '../../../src/plan/index.js';
import { itemSelection } from '../../../src/apply/index.js';
import type { ActualApikey, PlanClock, RotatingKey } from '../../../src/model/index.js';
import { actual, desired, key, policyFor } from '../../helpers/plan-fixtures.js';

const day = 86_400_000;
const t0 = Date.parse('2026-01-01T00:00:00Z');
const rotate = { every: '90d', everyMs: 90 * day, overlap: '24h', overlapMs: day };
const d = desired({ apikeys: [key('ci', { roles: [2], rotate })] });
const remote = (...ids: number[]): ActualApikey[] => ids.map((id) => ({ id, name: 'ci', superuser: false, roles: [2] }));
const clock = (now: number, rotating: [number, RotatingKey][] = []): PlanClock => ({
  now,
  createdAt: (kind, id) => (kind === 'apikey' && id === 5 ? t0 : kind === 'apikey' && id === 9 ? t0 + 90 * day : undefined),
  ...(rotating.length === 0 ? {} : { rotating: new Map(rotating) }),
});
const shown = (p: ReturnType<typeof plan>) => p.changes.map((c) => [c.action, c.key, c.id, c.replaces ?? null, c.reason]);

describe('apikey rotation (issue 30): rotate: {every, overlap} in the planner, on the clock it is given', () => {
  it('before `every`: nothing is planned', () => {
    const p = plan(d, actual([], remote(5)), policyFor(d), noFingerprints, clock(t0 + 90 * day - 1));
    expect(p.changes).toEqual([]);
    expect(p.unchanged).toBe(1);
  });

  it('after `every`: a successor create (same name, roles, superuser) that replaces the old id, and no delete yet', () => {
    const p = plan(d, actual([], remote(5)), policyFor(d), noFingerprints, clock(t0 + 90 * day));
    expect(shown(p)).toEqual([['create', 'ci', null, 5, 'rotation: token created 90d ago, rotated every 90d; replaces id 5']]);
    expect(p.changes[0]!.fields).toMatchObject({ name: { after: 'ci' }, roles: { after: [2] }, superuser: { after: false } });
    expect(p.unchanged).toBe(0);
    expect(p.problems).toEqual([]);
  });

  it('during the overlap: the twin is neither an ambiguity nor a duplicate to delete; nothing more is planned', () => {
    const rotating: [number, RotatingKey][] = [[5, { successor: 9, since: t0 + 90 * day }]];
    const p = plan(d, actual([], remote(5, 9)), policyFor(d, { deleteDuplicateApikeys: true }), noFingerprints, clock(t0 + 91 * day - 1, rotating));
    expect(p.changes).toEqual([]);
    expect(p.problems).toEqual([]);
    expect(p.unmanaged).toEqual([]);
    const strict = plan(d, actual([], remote(5, 9)), policyFor(d), noFingerprints, clock(t0 + 91 * day - 1, rotating));
    expect(strict.problems).toEqual([]);
  });

  it('after the overlap: the predecessor is deleted (reason rotated), the successor kept', () => {
    const rotating: [number, RotatingKey][] = [[5, { successor: 9, since: t0 + 90 * day }]];
    const p = plan(d, actual([], remote(5, 9)), policyFor(d), noFingerprints, clock(t0 + 91 * day, rotating));
    expect(shown(p)).toEqual([['delete', 'ci', 5, null, 'rotated']]);
    // The successor's own age counts from its create: no new rotation.
    expect(p.problems).toEqual([]);
  });

  it('two keys of the name and no record (a run died before saving): nothing is deleted, the plan says so', () => {
    const p = plan(d, actual([], remote(5, 9)), policyFor(d, { deleteDuplicateApikeys: true }), noFingerprints, clock(t0 + 95 * day));
    expect(p.changes).toEqual([]);
    expect(p.problems.map((x) => x.message)).toEqual([expect.stringContaining('records no rotation between them')]);
  });

  it('without `overlap`: the old key is deleted in the same run, once its successor exists and its token is written', () => {
    const now = desired({ apikeys: [key('ci', { roles: [2], rotate: { every: '90d', everyMs: 90 * day, overlapMs: 0 } })] });
    const p = plan(now, actual([], remote(5)), policyFor(now), noFingerprints, clock(t0 + 90 * day));
    expect(p.changes.map((c) => [c.action, c.id, c.replaces ?? null, c.replaced ?? null])).toEqual([
      ['create', null, 5, null],
      ['delete', 5, null, true],
    ]);
  });

  it('a successor of a key without rotate: (an interrupted --replace, adopted by the next run): the old key is deleted now, the successor kept', () => {
    const plain = desired({ apikeys: [key('ci', { roles: [2] })] });
    const p = plan(plain, actual([], remote(5, 9)), policyFor(plain), noFingerprints, clock(t0, [[5, { successor: 9, since: t0 }]]));
    expect(shown(p)).toEqual([['delete', 'ci', 5, null, 'rotated: replaced by id 9, whose token is in the sink']]);
    expect(p.problems).toEqual([]);
  });

  it('nextRotationAt: when the rotation falls due, or the overlap ends; nothing for a key without rotate:, an ambiguous name or a time past', () => {
    expect(nextRotationAt(d.apikeys, remote(5), clock(t0))).toBe(t0 + 90 * day);
    // In rotation: the overlap's end, not the successor's own rotation.
    expect(nextRotationAt(d.apikeys, remote(5, 9), clock(t0 + 90 * day, [[5, { successor: 9, since: t0 + 90 * day }]]))).toBe(t0 + 91 * day);
    // The overlap passed (the run deletes now): the successor's rotation is next.
    expect(nextRotationAt(d.apikeys, remote(9), clock(t0 + 91 * day))).toBe(t0 + 180 * day);
    expect(nextRotationAt(d.apikeys, remote(5), clock(t0 + 90 * day))).toBeUndefined();
    expect(nextRotationAt(d.apikeys, remote(5, 9), clock(t0))).toBeUndefined();
    expect(nextRotationAt(desired({ apikeys: [key('ci', { roles: [2] })] }).apikeys, remote(5), clock(t0))).toBeUndefined();
  });

  it('a cycle in the state file (5 -> 9 -> 5, or 5 -> 5: hand-edited or corrupted): no key hidden, no third key created, nothing deleted; the plan says so', () => {
    const cycle: [number, RotatingKey][] = [
      [5, { successor: 9, since: t0 }],
      [9, { successor: 5, since: t0 }],
    ];
    for (const file of [d, desired({ apikeys: [key('ci', { roles: [2] })] })]) {
      const p = plan(file, actual([], remote(5, 9)), policyFor(file, { deleteDuplicateApikeys: file === d }), noFingerprints, clock(t0 + 200 * day, cycle));
      expect(shown(p)).toEqual([]);
      expect(p.problems.map((x) => x.code)).toEqual(['ambiguous']);
      expect(p.notes).toContainEqual(expect.stringContaining('ids 5, 9 form a cycle'));
    }
    const self = plan(d, actual([], remote(5)), policyFor(d), noFingerprints, clock(t0 + 10 * day, [[5, { successor: 5, since: t0 }]]));
    expect(shown(self)).toEqual([]);
    expect(self.unchanged).toBe(1);
    expect(nextRotationAt(d.apikeys, remote(5, 9), clock(t0, cycle))).toBeUndefined();
  });

  it('a third key of the name during an overlap (no record of it): the ambiguity names the hidden predecessor too, and pinning the successor deletes the predecessor only', () => {
    const rotating: [number, RotatingKey][] = [[5, { successor: 9, since: t0 + 90 * day }]];
    const p = plan(d, actual([], remote(5, 7, 9)), policyFor(d), noFingerprints, clock(t0 + 90 * day + 1000, rotating));
    expect(p.changes).toEqual([]);
    expect(p.problems.map((x) => x.message)).toEqual([expect.stringContaining('(ids 7, 9); pin the one to manage with `id:`; id 5, the predecessor of id 9 in rotation, carries the name too')]);
    const pinned = desired({ apikeys: [key('ci', { roles: [2], id: 9, rotate })] });
    const q = plan(pinned, actual([], remote(5, 7, 9)), policyFor(pinned), noFingerprints, clock(t0 + 90 * day + 1000, rotating));
    expect(shown(q)).toEqual([['delete', 'ci', 5, null, 'rotated: replaced by id 9, whose token is in the sink']]);
    expect(q.unmanaged).toEqual([{ kind: 'apikey', key: 'ci', id: 7 }]);
  });

  describe('a key rotated again during its overlap (`amsync rotate` then: 5 -> 9 -> 12)', () => {
    const chain: [number, RotatingKey][] = [
      [5, { successor: 9, since: t0 }],
      [9, { successor: 12, since: t0 + day / 2 }],
    ];
    const three = remote(5, 9, 12);

    it('each predecessor is deleted once its own overlap has passed (the first one was hidden for good, then reported ambiguous)', () => {
      expect(shown(plan(d, actual([], three), policyFor(d), noFingerprints, clock(t0 + day - 1, chain)))).toEqual([]);
      expect(shown(plan(d, actual([], three), policyFor(d), noFingerprints, clock(t0 + day, chain)))).toEqual([['delete', 'ci', 5, null, 'rotated']]);
      const both = plan(d, actual([], three), policyFor(d), noFingerprints, clock(t0 + 2 * day, chain));
      expect(shown(both)).toEqual([
        ['delete', 'ci', 5, null, 'rotated'],
        ['delete', 'ci', 9, null, 'rotated'],
      ]);
      expect(both.problems).toEqual([]);
      expect(nextRotationAt(d.apikeys, three, clock(t0, chain))).toBe(t0 + day);
    });

    it('`amsync rotate` (--only and --replace) during an overlap rotates the successor (it found two keys of the name and planned nothing)', () => {
      const selection = { selection: itemSelection({ only: ['apikey:ci'], exclude: [], replace: ['apikey:ci'] })! };
      const p = plan(d, actual([], remote(5, 9)), policyFor(d, selection), noFingerprints, clock(t0 + day / 2, [chain[0]!]));
      expect(shown(p)).toEqual([['create', 'ci', null, 9, 'rotation: requested now; replaces id 9']]);
    });

    it('`ensure: absent`: the whole chain is deleted', () => {
      const absent = desired({ apikeys: [key('ci', { roles: [2], ensure: 'absent' })] });
      expect(shown(plan(absent, actual([], three), policyFor(absent), noFingerprints, clock(t0 + day / 2 + 1, chain)))).toEqual([
        ['delete', 'ci', 5, null, 'ensure: absent; predecessor of id 9 in rotation'],
        ['delete', 'ci', 9, null, 'ensure: absent; predecessor of id 12 in rotation'],
        ['delete', 'ci', 12, null, 'ensure: absent'],
      ]);
    });
  });

  describe('a rotation that ends during the overlap: the predecessor is never hidden from the plan (review finding)', () => {
    const rotating: [number, RotatingKey][] = [[5, { successor: 9, since: t0 + 90 * day }]];
    const during = clock(t0 + 90 * day + 1000, rotating);
    const planOf = (file: ReturnType<typeof desired>, overrides: Parameters<typeof policyFor>[1] = {}) => plan(file, actual([], remote(5, 9)), policyFor(file, overrides), noFingerprints, during);

    it('`rotate:` removed: the successor stays the key, the predecessor is deleted now (a normal delete, counted by the safety checks)', () => {
      const plain = desired({ apikeys: [key('ci', { roles: [2] })] });
      const p = planOf(plain);
      expect(shown(p)).toEqual([['delete', 'ci', 5, null, 'rotated: replaced by id 9, whose token is in the sink']]);
      expect(p.unchanged).toBe(1);
      expect(checkSafety(p, plain, policyFor(plain), { maxDeletes: 0, allowEmptyPrune: false })?.message).toContain('refusing to delete 1 items');
    });

    it('`ensure: absent`: both keys are deleted and shown, and both count against the deletion budget', () => {
      const absent = desired({ apikeys: [key('ci', { roles: [2], ensure: 'absent' })] });
      const p = planOf(absent);
      expect(shown(p)).toEqual([
        ['delete', 'ci', 5, null, 'ensure: absent; predecessor of id 9 in rotation'],
        ['delete', 'ci', 9, null, 'ensure: absent'],
      ]);
      expect(p.problems).toEqual([]);
      expect(checkSafety(p, absent, policyFor(absent), { maxDeletes: 1, allowEmptyPrune: false })?.message).toContain('refusing to delete 2 items');
    });

    it('`ensure: absent` on an observed item (mode: observe): both deletes are reported as drift, neither planned', () => {
      const observedAbsent = desired({ apikeys: [key('ci', { roles: [2], ensure: 'absent', mode: 'observe' })] });
      const p = planOf(observedAbsent);
      expect(p.changes).toEqual([]);
      expect(p.observed?.map((c) => [c.action, c.id, c.reason])).toEqual([
        ['delete', 5, 'ensure: absent; predecessor of id 9 in rotation'],
        ['delete', 9, 'ensure: absent'],
      ]);
    });

    it('no longer declared: both listed as unmanaged; with prune, both deleted; protected, both protected', () => {
      const gone = desired({ apikeys: [key('other', { roles: [2] })] });
      expect(planOf(gone).unmanaged.filter((r) => r.key === 'ci')).toEqual([
        { kind: 'apikey', key: 'ci', id: 5 },
        { kind: 'apikey', key: 'ci', id: 9 },
      ]);
      const pruned = desired({ apikeys: [key('other', { roles: [2] })], prune: { sshUsers: false, apikeys: true } });
      expect(shown(planOf(pruned)).filter((c) => c[1] === 'ci')).toEqual([
        ['delete', 'ci', 5, null, 'prune: not declared; predecessor of id 9 in rotation'],
        ['delete', 'ci', 9, null, 'prune: not declared'],
      ]);
      const kept = desired({ apikeys: [key('other', { roles: [2] })], prune: { sshUsers: false, apikeys: true }, protect: { sshUsers: [], apikeys: ['ci'] } });
      const p = planOf(kept);
      expect(p.changes.filter((c) => c.key === 'ci')).toEqual([]);
      expect(p.protected).toEqual([
        { kind: 'apikey', key: 'ci', id: 5 },
        { kind: 'apikey', key: 'ci', id: 9 },
      ]);
    });

    it('`rotate:` removed with a third key of the name (no record of it) and --delete-duplicate-apikeys: undecidable, nothing of it deleted (the successor, whose token is in the sink, was deleted as a duplicate of the stray key and its predecessor with it)', () => {
      const plain = desired({ apikeys: [key('ci', { roles: [2] })] });
      const p = plan(plain, actual([], remote(5, 7, 9)), policyFor(plain, { deleteDuplicateApikeys: true }), noFingerprints, during);
      expect(p.changes).toEqual([]);
      expect(p.problems.map((q) => [q.key, q.code])).toEqual([['ci', 'ambiguous']]);
    });

    it('the successor pinned with `id:` and `ensure: absent`: that id is deleted, not its predecessor (which becomes the key of the name again)', () => {
      const dropSuccessor = desired({ apikeys: [key('ci', { roles: [2], id: 9, ensure: 'absent' })] });
      const p = planOf(dropSuccessor);
      expect(shown(p)).toEqual([['delete', 'ci', 9, null, 'ensure: absent']]);
      expect(p.unmanaged).toEqual([{ kind: 'apikey', key: 'ci', id: 5 }]);
      const keepName = desired({ apikeys: [key('ci', { roles: [2], id: 9, ensure: 'absent' }), key('ci', { roles: [2], rotate })] });
      const q = planOf(keepName);
      expect(shown(q)).toEqual([['delete', 'ci', 9, null, 'ensure: absent']]);
      expect(q.unchanged).toBe(1);
    });

    it('a declared key a protect glob covers is never rotated nor its predecessor deleted (protect: never changed or deleted)', () => {
      const protect = { sshUsers: [], apikeys: ['ci'] };
      const withRotate = desired({ apikeys: [key('ci', { roles: [2], rotate })], protect });
      expect(plan(withRotate, actual([], remote(5)), policyFor(withRotate), noFingerprints, clock(t0 + 91 * day)).changes).toEqual([]);
      expect(plan(withRotate, actual([], remote(5, 9)), policyFor(withRotate), noFingerprints, clock(t0 + 200 * day, rotating)).changes).toEqual([]);
      const plain = desired({ apikeys: [key('ci', { roles: [2] })], protect });
      expect(planOf(plain).changes).toEqual([]);
    });

    it('a protected key whose rotation is withheld shows it: the predecessor kept past its overlap (or once `rotate:` is removed), and a key whose rotation is due, are listed as protected', () => {
      const protect = { sshUsers: [], apikeys: ['ci'] };
      const withRotate = desired({ apikeys: [key('ci', { roles: [2], rotate })], protect });
      const past = plan(withRotate, actual([], remote(5, 9)), policyFor(withRotate), noFingerprints, clock(t0 + 200 * day, rotating));
      expect(past.protected).toEqual([{ kind: 'apikey', key: 'ci', id: 5 }]);
      expect(past.unchanged).toBe(1);
      // During the overlap the predecessor is kept anyway: nothing is withheld.
      expect(plan(withRotate, actual([], remote(5, 9)), policyFor(withRotate), noFingerprints, during).protected).toEqual([]);
      const plain = desired({ apikeys: [key('ci', { roles: [2] })], protect });
      expect(planOf(plain).protected).toEqual([{ kind: 'apikey', key: 'ci', id: 5 }]);
      expect(plan(withRotate, actual([], remote(5)), policyFor(withRotate), noFingerprints, clock(t0 + 91 * day)).protected).toEqual([{ kind: 'apikey', key: 'ci', id: 5 }]);
      expect(plan(withRotate, actual([], remote(5)), policyFor(withRotate), noFingerprints, clock(t0 + 89 * day)).protected).toEqual([]);
    });

    it('the successor pinned with `id:`: the rotation ends, the predecessor is deleted now; the predecessor pinned: it is the key (never "no remote apikey has id 5")', () => {
      const pinnedSuccessor = desired({ apikeys: [key('ci', { roles: [2], id: 9, rotate })] });
      expect(shown(planOf(pinnedSuccessor))).toEqual([['delete', 'ci', 5, null, 'rotated: replaced by id 9, whose token is in the sink']]);
      const pinnedPredecessor = desired({ apikeys: [key('ci', { roles: [2], id: 5 })] });
      const p = planOf(pinnedPredecessor);
      expect(p.problems).toEqual([]);
      expect(p.changes).toEqual([]);
      expect(p.unchanged).toBe(1);
      expect(p.unmanaged).toEqual([{ kind: 'apikey', key: 'ci', id: 9 }]);
    });
  });
});
