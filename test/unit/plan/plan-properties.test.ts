import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ActualApikey, ActualSshUser, DesiredApikey, DesiredSshUser, DesiredState } from '../../../src/model/index.js';
import { plan } from '../../../src/plan/index.js';
import { applyPlan } from '../../../src/apply/index.js';
import { readActualState } from '../../../src/state/index.js';
import { StoreService } from '../../helpers/store-service.js';
import { policyFor, secret } from '../../helpers/plan-fixtures.js';

const names = fc.constantFrom('alice', 'bob', 'carol', 'dave', 'eve', 'root', 'admin-x', 'ci', 'mon');
const roleSet = fc.uniqueArray(fc.integer({ min: 1, max: 4 }), { maxLength: 4 });

const actualUsers = fc.uniqueArray(fc.record({ username: names, level: fc.constantFrom('n1', 'n2') }), { selector: (u) => u.username, maxLength: 7 })
  .map((us) => us.map((u, i): ActualSshUser => ({ id: i + 1, ...u })));
// Apikey names may repeat remotely: the service does not keep them unique.
const actualKeys = fc.array(fc.record({ name: names, superuser: fc.boolean(), roles: roleSet }), { maxLength: 7 })
  .map((ks) => ks.map((k, i): ActualApikey => ({ id: 100 + i, ...k, roles: [...k.roles].sort((a, b) => a - b) })));

const desiredUsers = fc.uniqueArray(
  fc.record({ username: names, level: fc.constantFrom('n1', 'n2'), ensure: fc.constantFrom('present', 'present', 'absent'), pw: fc.option(fc.constantFrom('p1', 'p2')), pin: fc.option(fc.integer({ min: 1, max: 9 })) }),
  { selector: (u) => u.username, maxLength: 6 },
);
const desiredKeys = fc.uniqueArray(
  fc.record({ name: names, superuser: fc.boolean(), roles: roleSet, ensure: fc.constantFrom('present', 'present', 'absent'), pin: fc.option(fc.integer({ min: 100, max: 108 })) }),
  { selector: (k) => k.name, maxLength: 6 },
);

const scenario = fc.record({
  actualUsers, actualKeys, desiredUsers, desiredKeys,
  prune: fc.record({ sshUsers: fc.boolean(), apikeys: fc.boolean() }),
  protect: fc.record({ sshUsers: fc.subarray(['root', 'admin*']), apikeys: fc.subarray(['mon']) }),
  passwordMode: fc.constantFrom('state' as const, 'create-only' as const, 'rotate' as const),
});

type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

function buildDesired(s: Scenario): DesiredState {
  // Pinned ids are unique per kind (the file validator refuses duplicates).
  const seenUserPins = new Set<number>();
  const seenKeyPins = new Set<number>();
  const sshUsers = s.desiredUsers.map((u): DesiredSshUser => {
    const id = u.pin !== null && !seenUserPins.has(u.pin) ? (seenUserPins.add(u.pin), u.pin) : undefined;
    return { username: u.username, level: u.level, ensure: u.ensure as 'present' | 'absent', ...(u.pw ? { password: secret(u.pw) } : {}), ...(id !== undefined ? { id } : {}) };
  });
  const apikeys = s.desiredKeys.map((k): DesiredApikey => {
    const id = k.pin !== null && !seenKeyPins.has(k.pin) ? (seenKeyPins.add(k.pin), k.pin) : undefined;
    return { name: k.name, superuser: k.superuser, roles: [...k.roles].sort((a, b) => a - b), ensure: k.ensure as 'present' | 'absent', ...(id !== undefined ? { id } : {}) };
  });
  return { sshUsers, apikeys, prune: s.prune, protect: s.protect };
}

describe('plan properties', () => {
  it('applied through the real apply step to the Store: every change applies in an order the service accepts, nothing outside the delete set disappears, and the next plan is empty with the same problems', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const d = buildDesired(s);
        const service = new StoreService();
        service.startIdsAt(1000);
        for (const u of s.actualUsers) service.seedUser(u.username, u.level, u.id);
        for (const k of s.actualKeys) service.seedKey(k.name, [...k.roles], k.superuser, k.id);
        const policy = policyFor(d, { passwords: { mode: s.passwordMode } });
        const fp = (v: string) => `fp:${v}`;
        const desiredFps = new Map(d.sshUsers.filter((u) => u.password).map((u) => [u.username, fp(u.password!.reveal())]));
        const recorded = new Map<string, string>();
        const { state: before } = await readActualState(service);
        const first = plan(d, before, policy, { desired: desiredFps, applied: recorded });
        const results = await applyPlan(first, {
          writer: service,
          desired: d,
          actual: before,
          policy,
          fingerprints: { desired: desiredFps, applied: recorded },
          passwords: { record: (id, pw) => recorded.set(String(id), fp(pw.reveal())), forget: (id) => recorded.delete(String(id)) },
        });
        expect(results.filter((r) => r.status !== 'applied')).toEqual([]);

        const { state: after } = await readActualState(service);
        const deleted = new Set(first.changes.filter((c) => c.action === 'delete').map((c) => `${c.kind}:${c.id}`));
        for (const u of before.sshUsers) if (!deleted.has(`sshUser:${u.id}`)) expect(after.sshUsers.some((x) => x.id === u.id)).toBe(true);
        for (const k of before.apikeys) if (!deleted.has(`apikey:${k.id}`)) expect(after.apikeys.some((x) => x.id === k.id)).toBe(true);

        const secondMode = s.passwordMode === 'rotate' ? 'state' : s.passwordMode;
        const second = plan(d, after, { ...policy, passwords: { mode: secondMode } }, { desired: desiredFps, applied: recorded });
        expect(second.changes).toEqual([]);
        // Problems are stable: the same items are reported, no new ones appear.
        expect(second.problems.map((p) => `${p.kind}:${p.key}:${p.code}`)).toEqual(first.problems.map((p) => `${p.kind}:${p.key}:${p.code}`));
      }),
      { numRuns: Number(process.env.PLAN_PROPERTY_RUNS ?? 500) },
    );
  });

  it('is deterministic: the same inputs give the same plan', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const d = buildDesired(s);
        const a = { sshUsers: s.actualUsers, apikeys: s.actualKeys };
        expect(plan(d, a, policyFor(d))).toEqual(plan(d, { sshUsers: [...a.sshUsers].reverse(), apikeys: [...a.apikeys].reverse() }, policyFor(d)));
      }),
      { numRuns: 200 },
    );
  });
});
