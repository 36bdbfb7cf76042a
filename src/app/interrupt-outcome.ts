import { endedByStop, stoppedBeforeSending } from '../api/index.js';
import { LockWaitStoppedError } from '../apply/index.js';
import { AmsyncError, InterruptedError } from '../errors.js';
import type { ChangeResult } from '../model/index.js';
import { interruptedSummary, type StopReceived } from '../report/index.js';
import { fsProblem } from '../secrets/index.js';
import { settingWords } from './check-local-outputs.js';

/**
 * After the report is out: an interrupt becomes its exit code, with the counts of what was
 * applied, failed and never sent, and a state file that could not be written becomes one clear
 * line (exit 1) — the results above stand either way.
 */
export function throwAfterReport(interrupts: StopReceived, stateSaveError: unknown, stateFile: string, results?: readonly ChangeResult[]): void {
  const stateLine = stateSaveError === undefined ? undefined : stateNotSavedMessage(stateSaveError, stateFile);
  if (interrupts.received) {
    throw new InterruptedError(interrupts.received, `${interruptedSummary(interrupts, results)}${stateLine ? `; but ${stateLine}` : ''}`);
  }
  if (stateLine) throw new AmsyncError('state_not_saved', stateLine, { cause: stateSaveError });
}

/**
 * An error that ended the run because the interrupt stopped its requests (a listing cut
 * short, a read before the apply; never sent, or a 503/429 whose retry the interrupt kept
 * from starting) becomes the interrupt itself: nothing was written, and the exit is 130 /
 * 143, not a failure of the service. Any other error is returned as it was.
 */
export function interruptedInstead(interrupts: Pick<StopReceived, 'received'> | undefined, error: unknown): unknown {
  if (interrupts?.received !== undefined && error instanceof LockWaitStoppedError) {
    return new InterruptedError(interrupts.received, `interrupted by ${interrupts.received} while waiting for the writer lock ${error.path} (${error.holder}); nothing was sent`);
  }
  if (interrupts?.received === undefined || !(stoppedBeforeSending(error) || endedByStop(error))) return error;
  return new InterruptedError(interrupts.received, `interrupted by ${interrupts.received} before any change was sent: nothing was written`);
}

/** Ctrl-C at the confirmation prompt: nothing was sent, nothing written; exit 130 / 143. */
export function interruptedAtPrompt(signal: 'SIGINT' | 'SIGTERM'): InterruptedError {
  return new InterruptedError(signal, `interrupted by ${signal} at the confirmation: nothing was written`);
}

function stateNotSavedMessage(error: unknown, stateFile: string): string {
  // Its path, setting, errno and fix as every local path's (src/secrets/local-path-error.ts): a
  // read-only volume needs another fix than a full disk.
  const setting = settingWords('stateFile');
  const { reason, fix } = fsProblem(error, { what: 'the state file', path: stateFile, setting, knob: '--state-file' });
  return `the state file ${stateFile} could not be written (${setting}): ${reason}: the changes above were applied, but drift of the passwords they set cannot be detected until it is; ${fix}, then run once with --rotate-passwords`;
}
