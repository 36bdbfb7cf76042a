import type { ApprovalGate, ApprovalStatus, PlanReview } from '../model/index.js';
import { normaliseApproval } from './approval-hash.js';

export interface ApprovalMatch {
  /** Indexes (in plan.changes) of the gated changes the approvals cover. */
  readonly approved: readonly number[];
  /** Approvals that name no gated change of this plan (stale, mistyped, or for another plan). */
  readonly unmatched: readonly string[];
}

/**
 * Which gated changes a set of approvals covers: the whole-set hash covers them all, a change's
 * own hash covers that change. Case and surrounding spaces do not matter. Pure.
 */
export function matchApprovals(review: PlanReview, approvals: Iterable<string>): ApprovalMatch {
  const byHash = new Map(review.gates.map((g) => [g.hash, g.index]));
  const approved = new Set<number>();
  const unmatched: string[] = [];
  for (const given of approvals) {
    const hash = normaliseApproval(given);
    if (hash !== undefined && hash === review.setHash) for (const g of review.gates) approved.add(g.index);
    else if (hash !== undefined && byHash.has(hash)) approved.add(byHash.get(hash)!);
    else unmatched.push(given);
  }
  return { approved: [...approved].sort((a, b) => a - b), unmatched };
}

/** The gated changes of a run that no approval covers yet (by --approve, an approvals file or a reviewed plan). Pure. */
export function pendingGates(status: ApprovalStatus): ApprovalGate[] {
  const approved = new Set(status.approved);
  return status.review.gates.filter((g) => !approved.has(g.index));
}

/**
 * The changes of `plan` that will be written once the approvals typed at the prompt are
 * added: a gated change still pending after them stays out. Pure.
 */
export function changesToWrite<C>(plan: { readonly changes: readonly C[] }, status: ApprovalStatus, typed: Iterable<string>): C[] {
  const nowApproved = new Set(matchApprovals(status.review, typed).approved);
  const held = new Set(pendingGates(status).filter((g) => !nowApproved.has(g.index)).map((g) => g.index));
  return plan.changes.filter((_, i) => !held.has(i));
}
