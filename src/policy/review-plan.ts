import type { AccessPolicy, ActualState, ApprovalGate, Change, GateRule, Plan, PlanReview, PolicyFinding } from '../model/index.js';
import { noReview } from '../model/index.js';
import { approvalHash, approvalSetHash } from './approval-hash.js';

/**
 * What the policy says about a plan (README, "Teams and governance"). Pure: the plan, the listing it was made
 * from, and the policy (with role names already resolved to ids).
 *
 * Changes that escalate privilege need an approval bound to their hash:
 * - `superuser: approve`: an apikey created with superuser, or updated to it (a drift
 *   correction that re-grants superuser someone removed by hand is such an update);
 * - `approveRoles`: a new key holding one of them, or one of them added to a key;
 * - `approveDeletesOver: N`: when the plan deletes more than N items, every delete. Not only
 *   those past the N-th: which ones those are is arbitrary, and applying N now and the rest at
 *   the next run would let any number through in steps.
 *
 * `maxSuperuserKeys` is counted over the state the plan leaves: the keys it creates or
 * updates, and every other key left in place (unmanaged, protected, unchanged). A plan that
 * ends over the limit with more superuser keys than the service has now is a violation (the
 * run is refused, exit 3); a service already over it, which the plan does not make worse, is
 * a warning: refusing would block unrelated changes until someone cleans up by hand.
 */
export function reviewPlan(plan: Plan, actual: ActualState, policy: AccessPolicy | undefined): PlanReview {
  if (!policy) return noReview;
  const approveRoles = new Set(policy.approveRoles);
  const deletes = plan.changes.filter((c) => c.action === 'delete').length;
  const deletesGated = policy.approveDeletesOver !== undefined && deletes > policy.approveDeletesOver;
  const gates: ApprovalGate[] = [];
  plan.changes.forEach((change, index) => {
    const rules: GateRule[] = [];
    if (change.kind === 'apikey' && change.action !== 'delete') {
      if (policy.superuser === 'approve' && grantsSuperuser(change)) rules.push('superuser');
      if (addedRoles(change).some((id) => approveRoles.has(id))) rules.push('approveRoles');
    }
    if (change.action === 'delete' && deletesGated) rules.push('approveDeletesOver');
    if (rules.length > 0) gates.push({ index, hash: approvalHash(change), rules });
  });

  const violations: PolicyFinding[] = [];
  const warnings: PolicyFinding[] = [];
  const superusers = superuserCount(plan, actual, policy.maxSuperuserKeys);
  if (superusers) (superusers.worse ? violations : warnings).push({ rule: 'maxSuperuserKeys', message: superusers.message });

  return {
    gates,
    ...(gates.length > 0 ? { setHash: approvalSetHash(gates.map((g) => plan.changes[g.index]!)) } : {}),
    violations,
    warnings,
  };
}

function grantsSuperuser(change: Change): boolean {
  const f = change.kind === 'apikey' ? change.fields.superuser : undefined;
  return f !== undefined && f.after === true && f.before !== true;
}

/** Role ids the change gives the key that it did not have. */
function addedRoles(change: Change): number[] {
  const f = change.kind === 'apikey' ? change.fields.roles : undefined;
  if (f === undefined || !Array.isArray(f.after)) return [];
  const before = new Set(Array.isArray(f.before) ? f.before : []);
  return f.after.filter((id) => !before.has(id));
}

/** The superuser keys before and after the plan, when the policy counts them and the count is over. */
function superuserCount(plan: Plan, actual: ActualState, max: number | undefined): { worse: boolean; message: string } | undefined {
  if (max === undefined) return undefined;
  const now = new Map<number, { name: string; superuser: boolean }>();
  for (const k of actual.apikeys) if (!now.has(k.id)) now.set(k.id, { name: k.name, superuser: k.superuser });
  const after = new Map(now);
  let created = 0;
  for (const c of plan.changes) {
    if (c.kind !== 'apikey') continue;
    if (c.action === 'delete' && c.id !== null) after.delete(c.id);
    else if (c.action === 'create') created += c.fields.superuser?.after === true ? 1 : 0;
    else if (c.id !== null && c.fields.superuser !== undefined) {
      const item = after.get(c.id);
      if (item) after.set(c.id, { ...item, superuser: c.fields.superuser.after === true });
    }
  }
  const before = [...now.values()].filter((k) => k.superuser).length;
  const total = [...after.values()].filter((k) => k.superuser).length + created;
  if (total <= max) return undefined;
  const undeclared = new Set(plan.unmanaged.concat(plan.protected).filter((r) => r.kind === 'apikey').map((r) => r.id));
  const leftInPlace = [...after.entries()].filter(([id, k]) => k.superuser && undeclared.has(id));
  const listed = leftInPlace.slice(0, 10).map(([id, k]) => `${JSON.stringify(k.name)} (id ${id})`);
  const more = leftInPlace.length > listed.length ? ` and ${leftInPlace.length - listed.length} more` : '';
  const undeclaredWords = leftInPlace.length === 0 ? '' : `, ${leftInPlace.length} of them not declared (left in place): ${listed.join(', ')}${more}`;
  if (total > before) {
    return {
      worse: true,
      message: `once applied, the service would have ${total} superuser apikeys${undeclaredWords}; the policy allows ${max} (maxSuperuserKeys: ${max}); it has ${before} now`,
    };
  }
  return {
    worse: false,
    message: `the service has ${before} superuser apikeys${undeclaredWords}; the policy allows ${max} (maxSuperuserKeys: ${max}); this plan does not add any`,
  };
}
