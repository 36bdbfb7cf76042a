import { createInterface } from 'node:readline';
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

/** One line, or undefined when the input ends or Ctrl-C comes (`signal`): both are a no. */
function readLine(input: CliIo['stdin'], signal?: AbortSignal): Promise<string | undefined> {
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
