import { InvalidInputError, SafetyError } from '../errors.js';
import type { AccessPolicy, ActualState, ApprovalStatus, ChangeResult, DesiredState, Plan, PlanReview } from '../model/index.js';
import { checkDesiredPolicy, matchApprovals, reviewPlan } from '../policy/index.js';
import { executePlan, heldWith, type ExecuteInput, type ExecuteOutcome } from '../apply/index.js';

/**
 * The desired state against its policy once role names are ids. InvalidInputError (exit 65):
 * the file breaks the policy, whatever the service holds.
 */
export function checkPolicy(desired: DesiredState): void {
  const violations = checkDesiredPolicy(desired);
  if (violations.length === 0) return;
  const n = violations.length;
  throw new InvalidInputError(`the desired state breaks its policy (${n} violation${n === 1 ? '' : 's'}); nothing was sent`, violations, 'policy_violation');
}

/** A plan that would break a rule because of what the service holds: refused, exit 3. */
export function policyRefusal(review: PlanReview): SafetyError | undefined {
  if (review.violations.length === 0) return undefined;
  const what = review.violations.map((v) => `${v.rule}: ${v.message}`).join('; ');
  return new SafetyError('policy_violation', `the plan breaks the policy, so nothing was written: ${what}`);
}

/** The review of a plan, and which of its gated changes the given approvals cover. */
export function approvalStatus(plan: Plan, actual: ActualState, policy: AccessPolicy | undefined, approvals: Iterable<string>): ApprovalStatus {
  const review = reviewPlan(plan, actual, policy);
  return statusOf(review, plan, actual, matchApprovals(review, approvals).approved);
}

/** The status with more approvals (typed at the prompt). */
export function withApprovals(status: ApprovalStatus, plan: Plan, actual: ActualState, more: readonly string[]): ApprovalStatus {
  const added = matchApprovals(status.review, more).approved;
  return statusOf(status.review, plan, actual, [...new Set([...status.approved, ...added])].sort((a, b) => a - b));
}

/** Every gated change approved: a reviewed saved plan (its review was the approval). */
export function allApproved(plan: Plan, actual: ActualState, review: PlanReview): ApprovalStatus {
  return statusOf(review, plan, actual, review.gates.map((g) => g.index));
}

function statusOf(review: PlanReview, plan: Plan, actual: ActualState, approved: readonly number[]): ApprovalStatus {
  const ok = new Set(approved);
  const pending = review.gates.filter((g) => !ok.has(g.index)).map((g) => g.index);
  const withheld = [...heldWith(plan.changes, actual, pending)].sort((a, b) => a - b);
  return { review, approved, withheld };
}

export interface ApplicablePart {
  /** The plan without the withheld changes: what is written. */
  readonly plan: Plan;
  /**
   * A result of `plan` (the `index`-th, when known), with the approval hash if its change was
   * gated and approved: the audit trail says which approval let it through.
   */
  annotate(result: ChangeResult, index?: number): ChangeResult;
}

/** What a run writes: the plan less the changes withheld for want of an approval. */
export function applicablePart(plan: Plan, status: ApprovalStatus): ApplicablePart {
  const approved = new Set(status.approved);
  const hashes = new Map(status.review.gates.filter((g) => approved.has(g.index)).map((g) => [g.index, g.hash]));
  if (status.withheld.length === 0 && hashes.size === 0) return { plan, annotate: (r) => r };
  const withheld = new Set(status.withheld);
  const kept = plan.changes.map((c, i) => ({ c, i })).filter(({ i }) => !withheld.has(i));
  const byPosition = kept.map(({ i }) => hashes.get(i));
  // Streamed results come in any order: matched by what identifies a change before it is
  // applied (a create's id is only known after).
  const identity = (kind: string, action: string, key: string, id: number | null | undefined) => `${kind}\0${action}\0${key}\0${action === 'create' ? '' : String(id)}`;
  const byIdentity = new Map(kept.filter(({ i }) => hashes.has(i)).map(({ c, i }) => [identity(c.kind, c.action, c.key, c.id), hashes.get(i)!]));
  return {
    plan: withheld.size === 0 ? plan : { ...plan, changes: kept.map(({ c }) => c) },
    annotate: (r, index) => {
      const hash = index === undefined ? byIdentity.get(identity(r.kind, r.action, r.key, r.id)) : byPosition[index];
      return hash === undefined ? r : { ...r, approval: hash };
    },
  };
}

/**
 * Writes the applicable part of a plan and gives its results in the whole plan's terms (each
 * approved change with its approval hash), as a sync and a saved plan's apply both do.
 */
export async function executeApplicable(part: ApplicablePart, input: Omit<ExecuteInput, 'plan'>): Promise<ExecuteOutcome> {
  const { onResult } = input;
  const outcome = await executePlan({ ...input, plan: part.plan, onResult: onResult && ((r) => onResult(part.annotate(r))) });
  return { ...outcome, results: outcome.results.map((r, i) => part.annotate(r, i)) };
}
