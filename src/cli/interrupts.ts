import { AmsyncError, InterruptedError } from '../errors.js';

type StopSignal = 'SIGINT' | 'SIGTERM';

export interface Interrupts {
  /** Fires on the first SIGINT or SIGTERM: no write starts after it. */
  readonly signal: AbortSignal;
  /** The signal that came, if one did. */
  readonly received: StopSignal | undefined;
  /** Removes the handlers (the run is over). */
  dispose(): void;
}

/** Where signals come from; the process by default, a fake in tests. */
export interface SignalEmitter {
  once(event: StopSignal, listener: () => void): unknown;
  removeListener(event: StopSignal, listener: () => void): unknown;
}

/**
 * Ctrl-C or SIGTERM during `sync` or `apply`: the first one stops new writes and lets the run
 * end normally — writes in flight finish, fingerprints and token files are saved, the plan,
 * the results so far and the summary are printed, --report is written — then the command
 * exits 130 / 143. The handlers are removed at the first signal, so a second one ends the
 * process at once, as the shell's default does.
 */
export function catchInterrupts(source: SignalEmitter, notify: (text: string) => void): Interrupts {
  const controller = new AbortController();
  let received: StopSignal | undefined;
  const handlers = new Map<StopSignal, () => void>();
  const dispose = () => {
    for (const [event, handler] of handlers) source.removeListener(event, handler);
    handlers.clear();
  };
  for (const event of ['SIGINT', 'SIGTERM'] as const) {
    const handler = () => {
      received = event;
      dispose();
      controller.abort(new Error(`interrupted (${event})`));
      notify(`\n${event}: stopping after the changes in flight; nothing new is started (again to quit at once)\n`);
    };
    handlers.set(event, handler);
    source.once(event, handler);
  }
  return {
    signal: controller.signal,
    get received() {
      return received;
    },
    dispose,
  };
}

/**
 * After the report is out: an interrupt becomes its exit code, and a state file that could
 * not be written becomes one clear line (exit 1) — the results above stand either way.
 */
export function throwAfterReport(interrupts: Interrupts, stateSaveError: unknown, stateFile: string): void {
  const stateLine = stateSaveError === undefined ? undefined : stateNotSavedMessage(stateSaveError, stateFile);
  if (interrupts.received) {
    throw new InterruptedError(interrupts.received, `interrupted by ${interrupts.received}: no change was started after it; the results above were applied and saved${stateLine ? `; but ${stateLine}` : ''}`);
  }
  if (stateLine) throw new AmsyncError('state_not_saved', stateLine, { cause: stateSaveError });
}

function stateNotSavedMessage(error: unknown, stateFile: string): string {
  const code = (error as NodeJS.ErrnoException).code;
  const why = code === 'ENOSPC' ? 'no space left on device' : error instanceof Error ? error.message : String(error);
  return `the state file ${stateFile} could not be written (${why}): the changes above were applied, but drift of the passwords they set cannot be detected until it is; free the space, then run once with --rotate-passwords`;
}
