import type { Timers } from '../../src/time/index.js';

interface Pending {
  id: number;
  at: number;
  callback: () => void;
}

/**
 * Virtual time for the daemon: timers fire only when the test advances the clock. Between
 * timers it lets promise chains settle, so a run started by a timer gets to its next await.
 */
export class FakeTimers implements Timers {
  #now = 0;
  #wall = Date.UTC(2025, 0, 1);
  #seq = 0;
  readonly #pending = new Map<number, Pending>();

  now = (): number => this.#now;
  wallNow = (): number => this.#wall + this.#now;

  setTimeout = (callback: () => void, ms: number): unknown => {
    const id = ++this.#seq;
    this.#pending.set(id, { id, at: this.#now + Math.max(0, ms), callback });
    return id;
  };

  clearTimeout = (handle: unknown): void => {
    this.#pending.delete(handle as number);
  };

  /** Delays of the timers still pending, from now, soonest first. */
  pendingDelays(): number[] {
    return [...this.#pending.values()].map((p) => p.at - this.#now).sort((a, b) => a - b);
  }

  async advance(ms: number): Promise<void> {
    const until = this.#now + ms;
    for (;;) {
      await settle();
      const next = [...this.#pending.values()].filter((p) => p.at <= until).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!next) break;
      this.#pending.delete(next.id);
      this.#now = next.at;
      next.callback();
    }
    this.#now = until;
    await settle();
  }
}

/** Lets queued promise callbacks (and a few rounds of I/O callbacks) run. */
export async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
}
