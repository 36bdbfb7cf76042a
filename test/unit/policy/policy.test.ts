import { describe, expect, it } from 'vitest';
import type { AccessPolicy, Change } from '../../../src/model/index.js';
import { plan } from '../../../src/plan/index.js';
import { approvalHash, approvalSetHash, checkDesiredPolicy, matchApprovals, normaliseApproval, reviewPlan } from '../../../src/policy/index.js';
import { compileNamePattern, namePatternProblem } from '../../../src/glob/index.js';
import { actual, desired, key, policyFor, secret, user } from '../../helpers/plan-fixtures.js';

/** DESIGN.md §10, issue 19 items 2 and 3: the policy's rules and the approval gate, as pure functions. */

const policy = (p: Partial<AccessPolicy>): AccessPolicy => ({ superuser: 'allow', forbiddenRoles: [], approveRoles: [], ...p });
const at = (file: string, line: number) => ({ file, line, col: 5 });

describe('the file against its policy (checkDesiredPolicy)', () => {
  it('no policy, no findings', () => {
    expect(checkDesiredPolicy(desired({ apikeys: [key('root', { superuser: true })] }))).toEqual([]);
  });

  it('each rule broken by a declared item is an error at the item, naming the rule; absent items break none', () => {
    const d = desired({
      sshUsers: [user('Bad_Name', { level: 'n2', source: at('a.yaml', 2) }), user('old_Name', { ensure: 'absent', source: at('a.yaml', 4) })],
      apikeys: [key('root-1', { superuser: true, roles: [4, 9], source: at('b.yaml', 2) }), key('root-2', { superuser: true, source: at('b.yaml', 5) })],
      policy: policy({ superuser: 'forbid', forbiddenRoles: [9], usernamePattern: '[a-z][a-z-]*', levels: ['n1'], maxSuperuserKeys: 1, apikeyNamePattern: 'root-[0-9]' }),
    });
    const found = checkDesiredPolicy(d).map((f) => [f.rule, f.path, `${f.position?.file}:${f.position?.line}`]);
    expect(found).toEqual([
      ['usernamePattern', 'sshUsers[0].username', 'a.yaml:2'],
      ['levels', 'sshUsers[0].level', 'a.yaml:2'],
      ['superuser', 'apikeys[0].superuser', 'b.yaml:2'],
      ['forbiddenRoles', 'apikeys[0].roles', 'b.yaml:2'],
      ['superuser', 'apikeys[1].superuser', 'b.yaml:5'],
      ['maxSuperuserKeys', 'apikeys[1].superuser', 'b.yaml:5'],
    ]);
    expect(checkDesiredPolicy(d).every((f) => f.code === 'policy_violation' && f.severity === 'error')).toBe(true);
  });

  it('counts item paths within each file when the state comes from several', () => {
    const d = desired({
      sshUsers: [user('ok', { source: at('a.yaml', 2) }), user('x', { level: 'n9', source: at('b.yaml', 2) })],
      policy: policy({ levels: ['n1'] }),
      origin: { files: ['a.yaml', 'b.yaml'], policy: { file: 'p.yaml', line: 1, col: 1 } },
    });
    expect(checkDesiredPolicy(d)).toMatchObject([{ path: 'sshUsers[0].level', message: expect.stringContaining('(policy rule levels in p.yaml:1:1)') }]);
  });

  it('compares role names with role names before they resolve, ids with ids', () => {
    const d = desired({ apikeys: [key('a', { roleNames: [{ name: 'admin' }] }), key('b', { roles: [4] })], policy: policy({ forbiddenRoles: [], forbiddenRoleNames: [{ name: 'admin' }] }) });
    expect(checkDesiredPolicy(d).map((f) => f.path)).toEqual(['apikeys[0].roles']);
  });
});

describe('policy patterns are matched in linear time, or refused', () => {
  it('a whole name must match, as between ^ and $', () => {
    const m = compileNamePattern('[a-z]+|svc-[0-9]+');
    expect([m('deploy'), m('svc-12'), m('Deploy'), m('x-deploy'), m('svc-1a')]).toEqual([true, true, false, false, false]);
  });

  it('a pattern that backtracks is answered at once; back-references and broken syntax are refused', () => {
    // V8's engine would take exponential time on this; the linear one answers (its work is
    // bounded by states × length, which test/unit/glob checks without a clock).
    expect(compileNamePattern('(a+)+b')(`${'a'.repeat(20_000)}c`)).toBe(false);
    expect(namePatternProblem('(a)\\1')).toMatch(/back-reference/);
    expect(namePatternProblem('a)|(b')).toMatch(/not a regular expression/);
    expect(namePatternProblem('[a-z]{1,31}')).toBeUndefined();
  });
});

describe('the approval gate (reviewPlan)', () => {
  const superuserPolicy = policy({ superuser: 'approve', approveRoles: [4], approveDeletesOver: 1 });

  it('gates a superuser create, an update to superuser (a drift re-grant), and a role of approveRoles added', () => {
    const d = desired({
      apikeys: [key('new-root', { superuser: true }), key('regrant', { superuser: true }), key('ops', { roles: [1, 4] }), key('has-4', { roles: [4] }), key('plain', { roles: [1] })],
      policy: superuserPolicy,
    });
    const a = actual([], [
      { id: 2, name: 'regrant', superuser: false, roles: [] },
      { id: 3, name: 'ops', superuser: false, roles: [1] },
      { id: 4, name: 'has-4', superuser: false, roles: [4, 5] },
    ]);
    const p = plan(d, a, policyFor(d));
    const review = reviewPlan(p, a, d.policy);
    const gated = review.gates.map((g) => [p.changes[g.index]!.key, p.changes[g.index]!.action, g.rules]);
    expect(gated).toEqual([
      ['new-root', 'create', ['superuser']],
      ['ops', 'update', ['approveRoles']],
      ['regrant', 'update', ['superuser']],
    ]);
    expect(review.setHash).toBe(approvalSetHash(review.gates.map((g) => p.changes[g.index]!)));
    // A key that keeps a role of approveRoles and loses another is not escalating.
    expect(p.changes.find((c) => c.key === 'has-4')).toBeDefined();
    expect(review.violations).toEqual([]);
  });

  it('superuser: allow gates nothing; no policy gates nothing', () => {
    const d = desired({ apikeys: [key('root', { superuser: true })] });
    const p = plan(d, actual(), policyFor(d));
    expect(reviewPlan(p, actual(), policy({})).gates).toEqual([]);
    expect(reviewPlan(p, actual(), undefined)).toEqual({ gates: [], violations: [], warnings: [] });
  });

  it('approveDeletesOver: over the threshold every delete is gated, at or under it none', () => {
    const d = desired({ apikeys: [key('keep')], prune: { sshUsers: false, apikeys: true }, policy: superuserPolicy });
    const one = actual([], [{ id: 1, name: 'keep', superuser: false, roles: [] }, { id: 2, name: 'old', superuser: false, roles: [] }]);
    expect(reviewPlan(plan(d, one, policyFor(d)), one, d.policy).gates).toEqual([]);
    const two = actual([], [...one.apikeys, { id: 3, name: 'older', superuser: false, roles: [] }]);
    const p = plan(d, two, policyFor(d));
    expect(reviewPlan(p, two, d.policy).gates.map((g) => [p.changes[g.index]!.key, g.rules])).toEqual([
      ['old', ['approveDeletesOver']],
      ['older', ['approveDeletesOver']],
    ]);
  });

  it('maxSuperuserKeys counts the state the plan leaves: over it and worse is a violation, already over and not worse a warning', () => {
    const d = desired({ apikeys: [key('root', { superuser: true })], policy: policy({ maxSuperuserKeys: 1 }) });
    const unmanaged = { id: 9, name: 'legacy', superuser: true, roles: [] };
    const a = actual([], [unmanaged]);
    const p = plan(d, a, policyFor(d));
    const worse = reviewPlan(p, a, d.policy);
    expect(worse.violations).toEqual([
      { rule: 'maxSuperuserKeys', message: 'once applied, the service would have 2 superuser apikeys, 1 of them not declared (left in place): "legacy" (id 9); the policy allows 1 (maxSuperuserKeys: 1); it has 1 now' },
    ]);
    const a2 = actual([], [unmanaged, { id: 10, name: 'root', superuser: true, roles: [] }]);
    const same = reviewPlan(plan(d, a2, policyFor(d)), a2, d.policy);
    expect(same.violations).toEqual([]);
    expect(same.warnings.map((w) => w.rule)).toEqual(['maxSuperuserKeys']);
    // A delete of a superuser key under prune brings it back under the limit.
    const pruned = desired({ ...d, prune: { sshUsers: false, apikeys: true } });
    const p3 = plan(pruned, a, policyFor(pruned));
    expect(reviewPlan(p3, a, pruned.policy)).toMatchObject({ violations: [], warnings: [] });
  });
});

describe('approval hashes are bound to exactly one change, and hold no secret', () => {
  const create: Change = { kind: 'apikey', action: 'create', key: 'root', id: null, fields: { name: { before: null, after: 'root' }, superuser: { before: null, after: true }, roles: { before: null, after: [] } } };

  it('16 hex digits; the same change gives the same hash, any difference another', () => {
    const h = approvalHash(create);
    expect(h).toMatch(/^[0-9a-f]{16}$/);
    expect(approvalHash({ ...create, reason: 'ignored', source: { file: 'x.yaml', line: 1, col: 1 } })).toBe(h);
    expect(approvalHash({ ...create, key: 'root2' })).not.toBe(h);
    expect(approvalHash({ ...create, fields: { ...create.fields, roles: { before: null, after: [4] } } })).not.toBe(h);
    expect(approvalHash({ ...create, action: 'update', id: 7 })).not.toBe(h);
  });

  it('a password change does not enter the hash', () => {
    const u: Change = { kind: 'sshUser', action: 'delete', key: 'old', id: 3, fields: { username: { before: 'old', after: null }, level: { before: 'n1', after: null } } };
    expect(approvalHash({ ...u, fields: { ...u.fields, password: { before: '(sensitive)', after: '(sensitive)' } } })).toBe(approvalHash(u));
  });

  it('approvals match by change hash or the set hash, whatever their case; others are reported unmatched', () => {
    const d = desired({ apikeys: [key('a', { superuser: true }), key('b', { superuser: true })], sshUsers: [user('u', { password: secret('p') })], policy: policy({ superuser: 'approve' }) });
    const p = plan(d, actual(), policyFor(d));
    const review = reviewPlan(p, actual(), d.policy);
    const [ga, gb] = review.gates;
    expect(matchApprovals(review, [ga!.hash.toUpperCase()])).toEqual({ approved: [ga!.index], unmatched: [] });
    expect(matchApprovals(review, [` ${review.setHash} `, 'nope'])).toEqual({ approved: [ga!.index, gb!.index], unmatched: ['nope'] });
    expect(normaliseApproval('3F9C0A1BE27D4410')).toBe('3f9c0a1be27d4410');
    expect(normaliseApproval('3f9c0a1be27d441')).toBeUndefined();
  });
});
