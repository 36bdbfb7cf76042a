import { settingWords } from '../app/index.js';
import { endedByStop, stoppedBeforeSending } from '../api/index.js';
import { LockWaitStoppedError } from '../apply/index.js';
import { AmsyncError, InterruptedError } from '../errors.js';
import type { ChangeResult } from '../model/index.js';
import { fsProblem } from '../secrets/index.js';

type StopSignal = 'SIGINT' | 'SIGTERM';

export interface Interrupts {
  /**
   * Fires on the first SIGINT or SIGTERM. Given to the client as its stop and to the apply as
   * its signal: nothing more is sent after it, no change starts, requests already sent finish.
   */
  readonly signal: AbortSignal;
  /** The signal that came, if one did. */
  readonly received: StopSignal | undefined;
  /** Requests already sent when it came (let finish); undefined before. */
  readonly sentAtSignal: number | undefined;
  /** Removes the handlers (the run is over). */
  dispose(): void;
}

/** Where signals come from; the process by default, a fake in tests. */
export interface SignalEmitter {
  once(event: StopSignal, listener: () => void): unknown;
  removeListener(event: StopSignal, listener: () => void): unknown;
}

/**
 * Ctrl-C or SIGTERM during `sync` or `apply`: the first one stops the run short of the wire —
 * writes waiting in the limiter, for a retry or for their turn are cancelled at once and no
 * retry starts; the requests already sent finish — then the run ends normally: fingerprints and
 * token files are saved, the plan, the results and the counts are printed, --report is
 * written, and the command exits 130 / 143. `onWire` tells how many requests were sent and not
 * answered when it came (the client's count): the message says so, and says nothing of
 * requests in flight when there are none (at the confirmation prompt). The handlers are
 * removed at the first signal, so a second one ends the process at once, as the shell's
 * default does.
 */
export function catchInterrupts(source: SignalEmitter, notify: (text: string) => void, onWire: () => number = () => 0): Interrupts {
  const controller = new AbortController();
  let received: StopSignal | undefined;
  let sentAtSignal: number | undefined;
  const handlers = new Map<StopSignal, () => void>();
  const dispose = () => {
    for (const [event, handler] of handlers) source.removeListener(event, handler);
    handlers.clear();
  };
  for (const event of ['SIGINT', 'SIGTERM'] as const) {
    const handler = () => {
      received = event;
      dispose();
      // Synchronous: every call still waiting leaves the line before the count below is taken.
      controller.abort(new Error(`interrupted (${event})`));
      sentAtSignal = onWire();
      notify(`\n${stoppingMessage(event, sentAtSignal)}\n`);
    };
    handlers.set(event, handler);
    source.once(event, handler);
  }
  return {
    signal: controller.signal,
    get received() {
      return received;
    },
    get sentAtSignal() {
      return sentAtSignal;
    },
    dispose,
  };
}

function stoppingMessage(event: StopSignal, sent: number): string {
  const again = '(again to quit at once)';
  if (sent === 0) return `${event}: stopping: nothing more is sent, and no request is waiting for an answer ${again}`;
  return `${event}: stopping: nothing more is sent; the ${requests(sent)} already sent ${sent === 1 ? 'finishes' : 'finish'}, then what was done is saved and reported ${again}`;
}

function requests(n: number): string {
  return `${n} request${n === 1 ? '' : 's'}`;
}

/**
 * After the report is out: an interrupt becomes its exit code, with the counts of what was
 * applied, failed and never sent, and a state file that could not be written becomes one clear
 * line (exit 1) — the results above stand either way.
 */
export function throwAfterReport(interrupts: Interrupts, stateSaveError: unknown, stateFile: string, results?: readonly ChangeResult[]): void {
  const stateLine = stateSaveError === undefined ? undefined : stateNotSavedMessage(stateSaveError, stateFile);
  if (interrupts.received) {
    throw new InterruptedError(interrupts.received, `${interruptedSummary(interrupts, results)}${stateLine ? `; but ${stateLine}` : ''}`);
  }
  if (stateLine) throw new AmsyncError('state_not_saved', stateLine, { cause: stateSaveError });
}

/**
 * `interrupted by SIGINT: 10 applied, 1 failed, 89 not started (never sent); …`: what the
 * service received, as counts, and what was sent after the signal (only what was on the wire).
 */
export function interruptedSummary(interrupts: Pick<Interrupts, 'received' | 'sentAtSignal'>, results: readonly ChangeResult[] | undefined): string {
  const by = `interrupted by ${interrupts.received ?? 'a signal'}`;
  if (results === undefined || results.length === 0) return `${by} before any change was sent: nothing was written`;
  const applied = results.filter((r) => r.status === 'applied').length;
  const failed = results.filter((r) => r.status === 'failed').length;
  const notStarted = results.filter((r) => r.notStarted === true).length;
  const skipped = results.filter((r) => r.status === 'skipped').length - notStarted;
  const counts = `${applied} applied, ${failed} failed, ${notStarted} not started (never sent)${skipped > 0 ? `, ${skipped} skipped` : ''}`;
  const sent = interrupts.sentAtSignal ?? 0;
  const after = sent === 0 ? 'nothing was sent after the signal' : `nothing was sent after the signal but the ${requests(sent)} already on the wire, which finished`;
  return `${by}: ${counts}; ${after}; the results above are saved`;
}

/**
 * An error that ended the run because the interrupt stopped its requests (a listing cut
 * short, a read before the apply; never sent, or a 503/429 whose retry the interrupt kept
 * from starting) becomes the interrupt itself: nothing was written, and the exit is 130 /
 * 143, not a failure of the service. Any other error is returned as it was.
 */
export function interruptedInstead(interrupts: Pick<Interrupts, 'received'> | undefined, error: unknown): unknown {
  if (interrupts?.received !== undefined && error instanceof LockWaitStoppedError) {
    return new InterruptedError(interrupts.received, `interrupted by ${interrupts.received} while waiting for the writer lock ${error.path} (${error.holder}); nothing was sent`);
  }
  if (interrupts?.received === undefined || !(stoppedBeforeSending(error) || endedByStop(error))) return error;
  return new InterruptedError(interrupts.received, `interrupted by ${interrupts.received} before any change was sent: nothing was written`);
}

/** Ctrl-C at the confirmation prompt: nothing was sent, nothing written; exit 130 / 143. */
export function interruptedAtPrompt(signal: StopSignal): InterruptedError {
  return new InterruptedError(signal, `interrupted by ${signal} at the confirmation: nothing was written`);
}

function stateNotSavedMessage(error: unknown, stateFile: string): string {
  // Its path, setting, errno and fix as every local path's (src/secrets/local-path-error.ts): a
  // read-only volume needs another fix than a full disk.
  const setting = settingWords('stateFile');
  const { reason, fix } = fsProblem(error, { what: 'the state file', path: stateFile, setting, knob: '--state-file' });
  return `the state file ${stateFile} could not be written (${setting}): ${reason}: the changes above were applied, but drift of the passwords they set cannot be detected until it is; ${fix}, then run once with --rotate-passwords`;
}
