import type { Timers } from '../../src/time/timers.js';

interface TimerEvent {
  readonly at: number;
  readonly id: number;
  readonly callback: () => void;
}

const earlier = (a: TimerEvent, b: TimerEvent): boolean => a.at < b.at || (a.at === b.at && a.id < b.id);

export interface VirtualTimeOptions {
  /**
   * Time runs by itself: every timer fires on a later turn of the event loop, the soonest
   * first, and the clock jumps to its due time. Real sockets keep working in between, so a
   * client can connect for real while its backoff and pacing cost no wall-clock time. Without
   * it, timers fire only when the test calls advance() or step(). @default false
   */
  readonly runsByItself?: boolean;
  /** Called before each timer fires: milliseconds the event loop is held up first (a busy machine). */
  readonly stall?: () => number;
  /**
   * Turns of the event loop given to promise chains (and I/O callbacks) between two timers
   * in advance(), so a run started by a timer gets to its next await. @default 5
   */
  readonly settleRounds?: number;
}

/**
 * The one virtual clock of the tests (the Timers the code takes in src/time): `now()` is
 * virtual milliseconds since the start, `wallNow()` that much after 2025-01-01. Timers are
 * kept in a binary heap, fired in order of due time (then of creation); tests read `now()`
 * instead of timing anything.
 */
export class VirtualTime implements Timers {
  #now = 0;
  #seq = 0;
  readonly #heap: TimerEvent[] = [];
  readonly #live = new Map<number, TimerEvent>();
  readonly #stall: (() => number) | undefined;
  readonly #runsByItself: boolean;
  readonly #settleRounds: number;
  #draining = false;

  constructor(options: VirtualTimeOptions = {}) {
    this.#stall = options.stall;
    this.#runsByItself = options.runsByItself === true;
    this.#settleRounds = options.settleRounds ?? 5;
  }

  now = (): number => this.#now;
  wallNow = (): number => Date.UTC(2025, 0, 1) + this.#now;

  setTimeout = (callback: () => void, ms: number): unknown => {
    const event = { at: this.#now + Math.max(0, ms), id: ++this.#seq, callback };
    this.#live.set(event.id, event);
    this.#push(event);
    if (this.#runsByItself) this.#drainSoon();
    return event.id;
  };

  clearTimeout = (handle: unknown): void => {
    this.#live.delete(handle as number);
  };

  /** Timers not yet fired nor cleared. */
  get pending(): number {
    return this.#live.size;
  }

  /** Delays of the timers still pending, from now, soonest first. */
  pendingDelays(): number[] {
    return [...this.#live.values()].map((e) => e.at - this.#now).sort((a, b) => a - b);
  }

  /** Fires the soonest timer, if it is due by `until`; false when none is. */
  step(until = Number.POSITIVE_INFINITY): boolean {
    while (this.#heap.length > 0 && !this.#live.has(this.#heap[0]!.id)) this.#pop();
    const first = this.#heap[0];
    if (first === undefined || first.at > until) return false;
    this.#pop();
    this.#live.delete(first.id);
    this.#now = Math.max(this.#now, first.at) + (this.#stall?.() ?? 0);
    first.callback();
    return true;
  }

  /** Moves the clock forward by `ms`, firing every timer due on the way and letting what they start settle. */
  async advance(ms: number): Promise<void> {
    const until = this.#now + ms;
    await settle(this.#settleRounds);
    for (let guard = 0; guard < 1_000_000 && this.step(until); guard += 1) await settle(this.#settleRounds);
    this.#now = Math.max(this.#now, until);
    await settle(this.#settleRounds);
  }

  /**
   * The process was stopped for `ms` (SIGSTOP, a VM pause, a long GC): the clock moves on and
   * nothing fires meanwhile. On resume (the next advance() or step()) every overdue timer
   * fires, late, in order of due time, as node's do after a pause.
   */
  pause(ms: number): void {
    this.#now += Math.max(0, ms);
  }

  #drainSoon(): void {
    if (this.#draining) return;
    this.#draining = true;
    setImmediate(() => {
      this.#draining = false;
      if (this.step() && this.#live.size > 0) this.#drainSoon();
    });
  }

  #push(event: TimerEvent): void {
    const heap = this.#heap;
    heap.push(event);
    for (let i = heap.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (!earlier(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  #pop(): void {
    const heap = this.#heap;
    const last = heap.pop()!;
    if (heap.length === 0) return;
    heap[0] = last;
    for (let i = 0; ; ) {
      const left = 2 * i + 1;
      const right = left + 1;
      let least = i;
      if (left < heap.length && earlier(heap[left]!, heap[least]!)) least = left;
      if (right < heap.length && earlier(heap[right]!, heap[least]!)) least = right;
      if (least === i) return;
      [heap[i], heap[least]] = [heap[least]!, heap[i]!];
      i = least;
    }
  }
}

/** Lets queued promise callbacks (and a few rounds of I/O callbacks) run. */
export async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
}
