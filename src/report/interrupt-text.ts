import type { ChangeResult } from '../model/index.js';

/** What the interrupt of a run knows: the signal, if one came, and the requests on the wire then. */
export interface StopReceived {
  readonly received: 'SIGINT' | 'SIGTERM' | undefined;
  /** Requests already sent when it came (let finish); undefined before. */
  readonly sentAtSignal: number | undefined;
}

/** The line printed at the first Ctrl-C or SIGTERM: what still happens, and that a second one quits. */
export function stoppingMessage(event: 'SIGINT' | 'SIGTERM', sent: number): string {
  const again = '(again to quit at once)';
  if (sent === 0) return `${event}: stopping: nothing more is sent, and no request is waiting for an answer ${again}`;
  return `${event}: stopping: nothing more is sent; the ${requests(sent)} already sent ${sent === 1 ? 'finishes' : 'finish'}, then what was done is saved and reported ${again}`;
}

function requests(n: number): string {
  return `${n} request${n === 1 ? '' : 's'}`;
}

/**
 * `interrupted by SIGINT: 10 applied, 1 failed, 89 not started (never sent); …`: what the
 * service received, as counts, and what was sent after the signal (only what was on the wire).
 */
export function interruptedSummary(interrupts: StopReceived, results: readonly ChangeResult[] | undefined): string {
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
