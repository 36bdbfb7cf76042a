import type { ApprovalStatus } from './approval.js';

/** What to pass to `--approve` (or list in the approvals file) to approve what is still pending. */
export interface ApprovalHint {
  /** The hashes, each one `--approve` value; empty when nothing is pending. */
  readonly hashes: readonly string[];
  /** `--approve A --approve B`: the flags as typed on a command line. */
  readonly flags: string;
  /** True when `hashes` is the one set hash that approves every gated change of the plan. */
  readonly setHash: boolean;
}

/**
 * The approvals that approve, on the next run, the gated changes this run left pending. The
 * set hash binds to the whole set of gated changes: it is right only while nothing of that
 * set was approved. Once some were (typed at the prompt, or given by their own hash), they
 * are applied in this run, the next plan's set is another and the old set hash matches no
 * change; what still matches is each pending change's own hash, bound to that change alone
 * (it keeps matching whatever else the next plan holds). Pure.
 */
export function approvalHint(status: ApprovalStatus): ApprovalHint {
  const approved = new Set(status.approved);
  const pending = status.review.gates.filter((g) => !approved.has(g.index));
  const whole = pending.length > 0 && status.approved.length === 0 && status.review.setHash !== undefined;
  const hashes = whole ? [status.review.setHash!] : pending.map((g) => g.hash);
  return { hashes, flags: hashes.map((h) => `--approve ${h}`).join(' '), setHash: whole };
}
