import { createInterface } from 'node:readline';
import type { ApprovalStatus } from '../model/index.js';
import { matchApprovals, pendingGates } from '../policy/index.js';
import type { ApprovalAnswer } from '../sync/index.js';
import type { CliIo } from './io.js';

/** Terraform's question, word for word where it fits. */
export const approvalQuestion = [
  '',
  'Do you want to perform these actions?',
  '  amsync will perform the actions described above.',
  "  Only 'yes' will be accepted to approve.",
  '',
  '  Enter a value: ',
].join('\n');

/**
 * Asks at a terminal before anything is written, as `terraform apply` does: only `yes`
 * approves; anything else, or the end of the input, cancels.
 */
export async function askApproval(io: CliIo, signal?: AbortSignal): Promise<boolean> {
  io.stdout.write(approvalQuestion);
  const answer = await readLine(io.stdin, signal);
  io.stdout.write('\n');
  return answer?.trim() === 'yes';
}

/**
 * The question when some changes escalate privilege (README, "Teams and governance"): like a typed
 * confirmation, the approval hash the plan printed approves them (all of them, or the
 * hashes of some); `yes` applies only the other changes; anything else cancels.
 */
export async function askApprovalOfGated(io: CliIo, approval: ApprovalStatus, changes: number, signal?: AbortSignal): Promise<boolean | ApprovalAnswer> {
  const n = pendingGates(approval).length;
  const others = changes - approval.withheld.length;
  io.stdout.write(
    [
      '',
      'Do you want to perform these actions?',
      `  ${n === 1 ? '1 change needs' : `${n} changes need`} approval (listed above with ${n === 1 ? 'its hash' : 'their hashes'}).`,
      `  To apply every change, type the approval hash ${approval.review.setHash}${n === 1 ? '' : " (or the hashes of the ones you approve)"}.`,
      others > 0 ? `  'yes' applies only the ${others === 1 ? 'other change' : `${others} other changes`}; anything else cancels.` : '  Anything else cancels.',
      '',
      '  Enter a value: ',
    ].join('\n'),
  );
  const answer = (await readLine(io.stdin, signal))?.trim();
  io.stdout.write('\n');
  if (answer === undefined || answer === '') return false;
  if (answer === 'yes') return others > 0;
  const typed = answer.split(/[\s,]+/).filter((t) => t !== '');
  const match = matchApprovals(approval.review, typed);
  // A mistyped hash approves nothing: cancel, as Terraform does for anything but yes.
  if (match.unmatched.length > 0 || match.approved.length === 0) return false;
  return { approve: typed };
}

/** One line, or undefined when the input ends or Ctrl-C comes (`signal`): both are a no. */
function readLine(input: CliIo['stdin'], signal?: AbortSignal): Promise<string | undefined> {
  // Ctrl-C that came before the question was read (as it was printed) is a no as well.
  if (signal?.aborted) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const lines = createInterface({ input, terminal: false });
    signal?.addEventListener('abort', () => lines.close(), { once: true });
    let answered = false;
    lines.once('line', (line) => {
      answered = true;
      lines.close();
      resolve(line);
    });
    lines.once('close', () => {
      if (!answered) resolve(undefined);
    });
  });
}
