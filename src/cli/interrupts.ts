import { stoppingMessage } from '../report/index.js';

// What happens after the signal (the summary, the exit it becomes) is app/interrupt-outcome.ts
// and report/interrupt-text.ts; this file only catches the signals.

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
