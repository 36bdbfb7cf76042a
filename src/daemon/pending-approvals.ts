import type { ApprovalStatus, GateRule, Kind, Action, Plan } from '../model/index.js';

/** A change the policy gates that waits for an approval: what a notification says about it. */
export interface PendingApproval {
  /** The approval hash to list in the approvals file. */
  readonly hash: string;
  readonly kind: Kind;
  readonly action: Action;
  /** Username or apikey name. */
  readonly key: string;
  /** Remote id; null for a create. */
  readonly id: number | null;
  /** Why it needs approval. */
  readonly rules: readonly GateRule[];
  /** Where the file asks for it (`teams/ops.yaml:12:5`), when known. */
  readonly source?: string;
}

/**
 * The daemon's hook for a notification (README, "Teams and governance"): new changes wait for an approval.
 * Holds no secret (a password is never part of a change's identity or hash).
 */
export interface PendingApprovalsEvent {
  /**
   * The hash of the whole set of this plan's gated changes. It approves every pending change
   * only while none of the set was approved: `approve` says what to list.
   */
  readonly setHash: string;
  /**
   * What to list in the approvals file to approve every pending change on the next run: the
   * set hash, or, once some of the set was approved (and applied), each pending change's own
   * hash (approvalHint in src/model).
   */
  readonly approve: readonly string[];
  /** Every change pending now. */
  readonly pending: readonly PendingApproval[];
  /** Those not announced by an earlier event (each change is announced once while it waits). */
  readonly added: readonly PendingApproval[];
}

/** The gated changes of a run that no approval covered. Pure. */
export function pendingApprovalsOf(plan: Plan, status: ApprovalStatus): PendingApproval[] {
  const approved = new Set(status.approved);
  return status.review.gates
    .filter((g) => !approved.has(g.index))
    .map((g) => {
      const c = plan.changes[g.index]!;
      return {
        hash: g.hash,
        kind: c.kind,
        action: c.action,
        key: c.key,
        id: c.id,
        rules: g.rules,
        ...(c.source ? { source: `${c.source.file}:${c.source.line}:${c.source.col}` } : {}),
      };
    });
}
