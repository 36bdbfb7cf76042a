import { onAbort } from './on-abort.js';

/**
 * The clock and timers the limiter and the retry loop run on. Injected so that pacing,
 * pauses and backoff can be tested in virtual time; production uses `systemTimers`.
 */
export interface Timers {
  /** Monotonic milliseconds (pacing must not jump when the wall clock is adjusted). */
  now(): number;
  /** Wall-clock epoch milliseconds, for HTTP-date `Retry-After` values. */
  wallNow(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemTimers: Timers = {
  now: () => performance.now(),
  wallNow: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Sleeps that can all be cut short at once (a client closing mid-backoff). */
export class Sleeper {
  readonly #timers: Timers;
  readonly #pending = new Map<unknown, () => void>();
  #closed = false;

  constructor(timers: Timers) {
    this.#timers = timers;
  }

  /** Resolves true after `ms`, or false at once when closed or when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
    if (this.#closed || signal?.aborted) return Promise.resolve(false);
    if (ms <= 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const handle = this.#timers.setTimeout(() => {
        this.#pending.delete(handle);
        unsubscribe();
        resolve(true);
      }, ms);
      // One listener per signal however many calls sleep on it (a deep queue's retries).
      const unsubscribe =
        signal === undefined
          ? () => undefined
          : onAbort(signal, () => {
              this.#timers.clearTimeout(handle);
              this.#pending.delete(handle);
              resolve(false);
            });
      this.#pending.set(handle, () => {
        unsubscribe();
        resolve(false);
      });
    });
  }

  close(): void {
    this.#closed = true;
    for (const [handle, wake] of this.#pending) {
      this.#timers.clearTimeout(handle);
      wake();
    }
    this.#pending.clear();
  }
}
