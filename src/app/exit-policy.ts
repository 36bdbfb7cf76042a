import type { TokenError } from '../apply/index.js';
import type { StopReceived } from '../report/index.js';
import { throwOnAuditFailure } from './audit-failure.js';
import type { AuditTrail } from './audit-trail.js';
import { throwAfterReport } from './interrupt-outcome.js';
import { AmsyncError, ChangesFailedError, SafetyError } from '../errors.js';
import { scrub } from '../secrets/index.js';
import { escapeControls } from '../text/index.js';
import { approvalHint, type ApprovalStatus, type ChangeResult, type Plan } from '../model/index.js';

/** Where the lines naming each token file that could not be written go (stderr), escaped as the CLI's errText escapes. */
type ErrorLines = { write(text: string): unknown };

/**
 * Exit 1 when declared items could not be planned or changes did not apply (the others did):
 * the same rule for `sync` and `amsync apply`.
 */
export function throwOnFailures(
  plan: Plan,
  results: readonly ChangeResult[] | undefined,
  tokenErrors: readonly TokenError[] = [],
  stderr?: ErrorLines,
  lockLost?: Error,
): void {
  const failed = results?.filter((r) => r.status !== 'applied').length ?? 0;
  // Each one names its key and file; they go to stderr beside the report, before the summary line.
  for (const t of tokenErrors) stderr?.write(escapeControls(scrub(`error: apikey ${JSON.stringify(t.key)}: ${t.error}\n`), { keepNewlines: true }));
  // The writer lock lost mid-run (another writer holds it now): that is the news, whatever else failed (exit 1).
  if (lockLost !== undefined) throw lockLost;
  if (plan.problems.length > 0) {
    throw new AmsyncError('plan_problems', `${plan.problems.length} declared item${plan.problems.length === 1 ? '' : 's'} could not be planned (see above)${failed > 0 ? `, and ${failed} change${failed === 1 ? '' : 's'} did not apply` : ''}`);
  }
  if (failed > 0) {
    const applied = results!.length - failed;
    throw new ChangesFailedError(failed, `${failed} of ${results!.length} changes did not apply (see above)${applied > 0 ? `; ${applied} did` : ''}`);
  }
  if (tokenErrors.length > 0) {
    throw new AmsyncError('token_files', `${tokenErrors.length} token file${tokenErrors.length === 1 ? '' : 's'} could not be written (see above)`);
  }
}

/**
 * Exit 3 when changes that need approval were not written (Argo CD's Prune=confirm: the rest
 * was applied, and CI notices), saying how to approve them.
 */
export function throwIfWithheld(plan: Plan, approval: ApprovalStatus): void {
  if (approval.withheld.length === 0) return;
  const approved = new Set(approval.approved);
  const pending = approval.review.gates.filter((g) => !approved.has(g.index));
  const n = approval.withheld.length;
  const list = pending.map((g) => `${g.hash} (${plan.changes[g.index]!.action} ${plan.changes[g.index]!.kind} ${JSON.stringify(plan.changes[g.index]!.key)}: ${g.rules.join(', ')})`).join(', ');
  throw new SafetyError(
    'approval_required',
    `${n} change${n === 1 ? '' : 's'} not written: ${pending.length === 1 ? 'it needs' : `${pending.length} need`} approval: ${list}${n > pending.length ? `, and ${n - pending.length} wait${n - pending.length === 1 ? 's' : ''} for them` : ''}; the other changes were applied. After review, run again with ${rerunWith(approval)}, or apply a reviewed saved plan (amsync plan --out plan.json; amsync apply plan.json)`,
  );
}

/**
 * The flags that approve, on the next run, what this one left pending: the set hash only
 * while none of the set was approved (see approvalHint); after a partial approval, the
 * pending changes' own hashes.
 */
function rerunWith(approval: ApprovalStatus): string {
  const hint = approvalHint(approval);
  if (hint.setHash) return `${hint.flags} (all of them) or each change's hash`;
  return `${hint.flags} (${hint.hashes.length === 1 ? 'the one not approved yet' : `the ${hint.hashes.length} not approved yet, or some of them`})`;
}


/** What a run that may have written leaves for its exit code. */
interface RunEnd {
  readonly plan: Plan;
  readonly results?: readonly ChangeResult[] | undefined;
  readonly stateSaveError?: unknown;
  readonly tokenErrors?: readonly TokenError[] | undefined;
  readonly lockLost?: Error | undefined;
}

/**
 * After the report is out, the one order for `sync` and `amsync apply`: an interrupt (130 /
 * 143) or a state file not saved (1), an audit log that missed a result (1), then `notes`
 * (warnings that change no exit code), then items not planned, changes that failed and token
 * files not written (1).
 */
export function throwAfterRun(outcome: RunEnd, at: { interrupts: StopReceived | undefined; stateFile: string; audit: AuditTrail | undefined; stderr: ErrorLines; notes?: readonly string[] }): void {
  if (at.interrupts) throwAfterReport(at.interrupts, outcome.stateSaveError, at.stateFile, outcome.results);
  throwOnAuditFailure(at.audit);
  for (const note of at.notes ?? []) at.stderr.write(note);
  throwOnFailures(outcome.plan, outcome.results, outcome.tokenErrors, at.stderr, outcome.lockLost);
}
