import type { Timers } from '../../src/time/timers.js';

interface Pending {
  readonly id: number;
  readonly at: number;
  readonly callback: () => void;
}

/**
 * Virtual time that runs by itself: every timer fires on the next turn of the event loop, the
 * soonest first, and the clock jumps to its due time. Real sockets keep working in between, so
 * a client can connect for real while its backoff and pacing cost no wall-clock time; tests
 * read `now()` (virtual milliseconds since the start) instead of timing anything.
 */
export class VirtualTime implements Timers {
  #now = 0;
  #seq = 0;
  readonly #pending = new Map<number, Pending>();
  #draining = false;

  now = (): number => this.#now;
  wallNow = (): number => Date.UTC(2025, 0, 1) + this.#now;

  setTimeout = (callback: () => void, ms: number): unknown => {
    const id = ++this.#seq;
    this.#pending.set(id, { id, at: this.#now + Math.max(0, ms), callback });
    this.#drainSoon();
    return id;
  };

  clearTimeout = (handle: unknown): void => {
    this.#pending.delete(handle as number);
  };

  #drainSoon(): void {
    if (this.#draining) return;
    this.#draining = true;
    setImmediate(() => {
      this.#draining = false;
      const next = [...this.#pending.values()].sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (next === undefined) return;
      this.#pending.delete(next.id);
      this.#now = Math.max(this.#now, next.at);
      next.callback();
      if (this.#pending.size > 0) this.#drainSoon();
    });
  }
}
