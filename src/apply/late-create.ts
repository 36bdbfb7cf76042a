import { Sleeper, systemTimers, type Timers } from '../time/index.js';

/**
 * Further looks for an apikey create whose answer was lost and whose key the first re-list did
 * not show. The service may still be processing that POST (it outlived the client's timeout):
 * looking again while this run holds the writer lock lets it land and be adopted here, instead
 * of being left for the next writer, who would not find it and create a duplicate.
 */
export interface LateCreateLooks {
  /** The wait before each further look (see lateCreateWaits). */
  readonly waitsMs: readonly number[];
  /** The clock of the waits. @default systemTimers */
  readonly timers?: Timers;
}

/** The most a lost apikey create is waited for, all further looks together. */
export const lateCreateBudgetMs = 30_000;

/**
 * Three further looks at growing intervals from the client's request timeout (the time a POST
 * the service holds has already outlived): timeout, 2×, 4×, cut so that all the waits together
 * stay within lateCreateBudgetMs.
 */
export function lateCreateWaits(requestTimeoutMs: number, budgetMs = lateCreateBudgetMs): number[] {
  const waits: number[] = [];
  let left = budgetMs;
  for (const factor of [1, 2, 4]) {
    const wait = Math.min(requestTimeoutMs * factor, left);
    if (wait <= 0) break;
    waits.push(wait);
    left -= wait;
  }
  return waits;
}

/**
 * Runs `look` after each wait until it finds something. Returns what it found and how long
 * was waited in all; `found` is undefined when every look came back empty, or when `signal`
 * fired (the waiting ends at once; `stopped` says so).
 */
export async function lookAgain<T>(
  looks: LateCreateLooks,
  look: () => Promise<T | undefined>,
  signal?: AbortSignal,
): Promise<{ found: T | undefined; waitedMs: number; stopped: boolean }> {
  const sleeper = new Sleeper(looks.timers ?? systemTimers);
  let waitedMs = 0;
  for (const wait of looks.waitsMs) {
    if (!(await sleeper.sleep(wait, signal))) return { found: undefined, waitedMs, stopped: true };
    waitedMs += wait;
    const found = await look();
    if (found !== undefined) return { found, waitedMs, stopped: false };
    if (signal?.aborted) return { found: undefined, waitedMs, stopped: true };
  }
  return { found: undefined, waitedMs, stopped: false };
}
