import type { EventLoopUtilization } from 'node:perf_hooks';

/**
 * Whether this process's event loop was busy for at least `threshold` of the last `windowMs`
 * or more (node's event loop utilization, cheap to read). A client whose own loop is that busy
 * cannot send faster: a higher rate would only queue requests inside it, and those go out even
 * after the server has said stop (they were let through before the 503 was handled).
 */
/** node's reading, or a test's: the utilization so far, or (given two) between two readings. */
export type LoopReading = (current?: EventLoopUtilization, last?: EventLoopUtilization) => EventLoopUtilization;

const nodeReading: LoopReading = (current, last) => performance.eventLoopUtilization(current, last);

export function eventLoopBusy(threshold = 0.9, windowMs = 100, read: LoopReading = nodeReading): () => boolean {
  // The first window starts at the first question, not when the client was made (work done in
  // between, such as reading the desired file, says nothing about sending).
  let last: EventLoopUtilization | undefined;
  let busy = false;
  return () => {
    const current = read();
    if (last === undefined) {
      last = current;
      return false;
    }
    const delta = read(current, last);
    if (delta.idle + delta.active >= windowMs) {
      busy = delta.utilization >= threshold;
      last = current;
    }
    return busy;
  };
}
