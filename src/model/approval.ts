/** The policy rules that make a change need an approval (README, "Teams and governance"). */
export type GateRule = 'superuser' | 'approveRoles' | 'approveDeletesOver';

/** A planned change that escalates privilege, and the hash an approval must name. */
export interface ApprovalGate {
  /** Index of the change in `plan.changes`. */
  readonly index: number;
  /**
   * 16 lowercase hex digits of sha256 over the change's kind, key, id, action and its fields'
   * before and after (never a secret): an approval is bound to exactly this change.
   */
  readonly hash: string;
  /** Why it needs approval. */
  readonly rules: readonly GateRule[];
}

/** A rule of the policy a plan breaks, or a finding about the service the reader should see. */
export interface PolicyFinding {
  /** The rule's name as written in `policy:` (`maxSuperuserKeys`). */
  readonly rule: string;
  readonly message: string;
}

/** What the policy says about one plan: pure, from the plan, the listing and the policy. */
export interface PlanReview {
  /** The changes that need approval, in plan order. */
  readonly gates: readonly ApprovalGate[];
  /** Hash of the whole set of gated changes (approves every one of them); absent without gates. */
  readonly setHash?: string;
  /** Rules the plan would break (exit 3, nothing written). */
  readonly violations: readonly PolicyFinding[];
  /** Rules the service breaks already, which this plan does not make worse (reported, not refused). */
  readonly warnings: readonly PolicyFinding[];
}

/** Which gated changes are approved in a run, and what is held back. */
export interface ApprovalStatus {
  readonly review: PlanReview;
  /** Indexes of gated changes approved (by `--approve`, an approvals file, a reviewed plan or at the prompt). */
  readonly approved: readonly number[];
  /**
   * Indexes of changes not applied for want of an approval: the gated ones not approved, and
   * changes that wait for one of them (a create that needs the name a gated delete frees).
   */
  readonly withheld: readonly number[];
}

export const noReview: PlanReview = { gates: [], violations: [], warnings: [] };
