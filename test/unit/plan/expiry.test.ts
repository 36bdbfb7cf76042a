import { describe, expect, it } from 'vitest';
import { checkSafety, noFingerprints, plan, summarize } from '../../../src/plan/index.js';
import { formatRemaining } from '../../../src/model/index.js';
import { renderText } from '../../../src/report/index.js';
import { actual, desired, key, policyFor, secret, user } from '../../helpers/plan-fixtures.js';

const at = (iso: string) => Date.parse(iso);

describe('expiry (issue 30): expires / ttl in the planner, on the clock it is given', () => {
  it('before expiry: planned as usual and listed with the time left; after it: deleted with reason expired', () => {
    const d = desired({ sshUsers: [user('contractor', { expires: '2026-12-31T18:00:00Z' })] });
    const remote = actual([{ id: 7, username: 'contractor', level: 'n1' }]);
    const before = plan(d, remote, policyFor(d), noFingerprints, { now: at('2026-12-29T14:00:00Z') });
    expect(before.changes).toEqual([]);
    expect(before.expiries).toEqual([{ kind: 'sshUser', key: 'contractor', id: 7, expiresAt: '2026-12-31T18:00:00Z', remainingSeconds: 2 * 86_400 + 4 * 3600 }]);
    const after = plan(d, remote, policyFor(d), noFingerprints, { now: at('2026-12-31T18:00:00Z') });
    expect(after.changes.map((c) => [c.action, c.key, c.id, c.reason])).toEqual([['delete', 'contractor', 7, 'expired']]);
    expect(after.expiries).toBeUndefined();
    expect(summarize(after)).toMatchObject({ delete: 1, expired: 1 });
  });

  it('a declared expired item that does not exist is never created: a note instead', () => {
    const d = desired({ apikeys: [key('audit-2026', { expires: '2026-01-01T00:00:00+01:00' })] });
    const p = plan(d, actual(), policyFor(d), noFingerprints, { now: at('2026-06-01T00:00:00Z') });
    expect(p.changes).toEqual([]);
    expect(p.notes).toEqual(['apikey "audit-2026" expired at 2025-12-31T23:00:00Z: not created (remove it from the file, or change its expiry).']);
  });

  it('ttl counts from the recorded create time, else from now (a create: from its create)', () => {
    const d = desired({ sshUsers: [user('oncall', { ttl: '72h', password: secret('pw') })] });
    const remote = actual([{ id: 3, username: 'oncall', level: 'n1' }]);
    const createdAt = (kind: string, id: number) => (kind === 'sshUser' && id === 3 ? at('2026-03-01T00:00:00Z') : undefined);
    const live = plan(d, remote, policyFor(d), noFingerprints, { now: at('2026-03-03T23:59:59Z'), createdAt });
    expect(live.expiries?.[0]?.expiresAt).toBe('2026-03-04T00:00:00Z');
    const gone = plan(d, remote, policyFor(d), noFingerprints, { now: at('2026-03-04T00:00:00Z'), createdAt });
    expect(gone.changes.map((c) => c.reason)).toEqual(['expired']);
    const fresh = plan(d, actual(), policyFor(d), noFingerprints, { now: at('2026-03-04T00:00:00Z'), createdAt });
    expect(fresh.changes.map((c) => c.action)).toEqual(['create']);
    expect(fresh.expiries?.[0]).toMatchObject({ id: null, expiresAt: '2026-03-07T00:00:00Z' });
  });

  it('an expired delete counts against the deletion budget', () => {
    const d = desired({ sshUsers: [user('a', { expires: '2026-01-01T00:00:00Z' }), user('b', { expires: '2026-01-01T00:00:00Z' })] });
    const p = plan(d, actual([{ id: 1, username: 'a', level: 'n1' }, { id: 2, username: 'b', level: 'n1' }]), policyFor(d), noFingerprints, { now: at('2026-02-01T00:00:00Z') });
    expect(checkSafety(p, d, policyFor(d), { maxDeletes: 1, allowEmptyPrune: false })?.code).toBeDefined();
  });

  it('without a clock (or an expiry) the plan is what it always was', () => {
    const d = desired({ sshUsers: [user('contractor', { expires: '2020-01-01T00:00:00Z' })] });
    const p = plan(d, actual([{ id: 7, username: 'contractor', level: 'n1' }]), policyFor(d));
    expect(p.changes).toEqual([]);
    expect('expiries' in p).toBe(false);
  });

  it('the text plan shows "expires in" beside the item, and counts expired deletes apart', () => {
    const d = desired({ sshUsers: [user('contractor', { expires: '2026-12-31T18:00:00Z' }), user('old', { expires: '2026-01-01T00:00:00Z' })] });
    const p = plan(d, actual([{ id: 7, username: 'contractor', level: 'n1' }, { id: 8, username: 'old', level: 'n1' }]), policyFor(d), noFingerprints, { now: at('2026-12-29T14:00:00Z') });
    const text = renderText({ plan: p, dryRun: true }, { color: false });
    expect(text).toContain('sshUser "contractor" (id 7): expires in 2d 4h (2026-12-31T18:00:00Z)');
    expect(text).toContain('1 to delete (1 expired)');
    expect(text).toContain('(expired)');
    expect(formatRemaining(90_061_000)).toBe('1d 1h');
    expect(formatRemaining(59_000)).toBe('59s');
  });
});
