import type { Timers } from '../time/index.js';

/**
 * Calls `fire` once things have been quiet for `waitMs` after the last poke, and at the
 * latest `maxWaitMs` after the first one, so a file rewritten without pause still syncs.
 */
export class Debouncer {
  readonly #timers: Timers;
  readonly #fire: () => void;
  #waitMs: number;
  #maxWaitMs: number;
  #handle: unknown;
  #firstPokeAt: number | undefined;
  #closed = false;

  constructor(timers: Timers, waitMs: number, fire: () => void, maxWaitMs = Math.max(waitMs * 10, 10_000)) {
    this.#timers = timers;
    this.#fire = fire;
    this.#waitMs = waitMs;
    this.#maxWaitMs = maxWaitMs;
  }

  get pending(): boolean {
    return this.#handle !== undefined;
  }

  poke(): void {
    if (this.#closed) return;
    const now = this.#timers.now();
    this.#firstPokeAt ??= now;
    const left = Math.max(0, this.#firstPokeAt + this.#maxWaitMs - now);
    this.#clear();
    this.#handle = this.#timers.setTimeout(() => {
      this.#handle = undefined;
      this.#firstPokeAt = undefined;
      this.#fire();
    }, Math.min(this.#waitMs, left));
  }

  setWait(waitMs: number, maxWaitMs = Math.max(waitMs * 10, 10_000)): void {
    this.#waitMs = waitMs;
    this.#maxWaitMs = maxWaitMs;
  }

  cancel(): void {
    this.#clear();
    this.#firstPokeAt = undefined;
  }

  close(): void {
    this.cancel();
    this.#closed = true;
  }

  #clear(): void {
    if (this.#handle !== undefined) this.#timers.clearTimeout(this.#handle);
    this.#handle = undefined;
  }
}
