import type { DispatchStamp } from './rate-controller.js';
import { onAbort, type Timers } from '../time/index.js';

export interface PacerOptions {
  /** Current rate in requests per second; read at every slot, so changes apply at once. */
  readonly rate: () => number;
  readonly timers: Timers;
  /**
   * Slots missed while callers were waiting (a late timer, a stalled event loop, every request
   * in flight) that may be made up at once, back to back. Without it a stall is lost for good,
   * and the rate falls short of the target by every late millisecond (10 % at 100 req/s with
   * 1 ms late timers). Bounded, so a stall never turns into more than a small burst, and only
   * callers that were waiting catch up: an idle spell banks nothing. @default 4
   */
  readonly maxBurst?: number;
}

interface Waiter {
  /** When the caller first asked for a slot (it may have waited elsewhere before: for a free window). */
  readonly since: number;
  /** When it came to the pacer. */
  readonly queuedAt: number;
  /** Goes before every other waiter, and only a pause holds it (acquireUrgent). */
  readonly urgent: boolean;
  /** An urgent waiter that keeps to the pace all the same (a retry after a 503): not spaced by it only in the line. */
  readonly keepsPace?: boolean;
  resolve: (stamp: DispatchStamp) => void;
  readonly reject: (reason: unknown) => void;
}

/** Raised to callers waiting for a slot when the limiter is closed. */
export class LimiterClosedError extends Error {
  constructor() {
    super('the limiter was closed');
    this.name = 'LimiterClosedError';
  }
}

/**
 * Raised to a caller whose stop signal fired while it waited for its turn (an interrupt): it
 * was taken out of the queue at once, and its request was never sent.
 */
export class LimiterStoppedError extends Error {
  constructor() {
    super('stopped before it was sent');
    this.name = 'LimiterStoppedError';
  }
}

/**
 * Lets requests through one at a time, evenly spaced at `1000 / rate` ms, in FIFO order.
 * Even spacing rather than bursts: a server that meters with a small token bucket rejects
 * bursts even when the average is within its limit. `pauseUntil` holds everyone back
 * (a Retry-After applies to the whole client, not to one request).
 */
export class Pacer {
  readonly #rate: () => number;
  readonly #timers: Timers;
  readonly #maxBurst: number;
  readonly #waiters: Waiter[] = [];
  #nextAt = Number.NEGATIVE_INFINITY;
  #pausedUntil = Number.NEGATIVE_INFINITY;
  #timer: unknown;
  #timerAt = Number.POSITIVE_INFINITY;
  #closed = false;

  constructor(options: PacerOptions) {
    this.#rate = options.rate;
    this.#timers = options.timers;
    this.#maxBurst = options.maxBurst ?? 4;
  }

  get waiting(): number {
    return this.#waiters.length;
  }

  /** Monotonic ms until which nothing is let through (a Retry-After); -Infinity when none. */
  get pausedUntil(): number {
    return this.#pausedUntil;
  }

  /**
   * Resolves when the caller may send; `since` is when it first asked (monotonic ms), if
   * earlier than now. Once `stop` fires the caller leaves the line at once and gets
   * LimiterStoppedError: it takes no slot, and those behind it move up.
   */
  acquire(since?: number, stop?: AbortSignal): Promise<DispatchStamp> {
    if (this.#closed) return Promise.reject(new LimiterClosedError());
    if (stop?.aborted) return Promise.reject(new LimiterStoppedError());
    return new Promise((resolve, reject) => {
      const now = this.#timers.now();
      const waiter: Waiter = { since: Math.min(since ?? now, now), queuedAt: now, urgent: false, resolve, reject };
      this.#enter(waiter, stop, resolve);
    });
  }

  /**
   * A slot for a call the others wait for (a token exchange, awaited by requests that hold their
   * slots): ahead of every other waiter and not spaced from the last slot, so it can never wait
   * behind a caller that waits for it; only a pause (a Retry-After) holds it. It counts against
   * the pace all the same: the next slot is spaced from it. `keepsPace` (a retry of that call,
   * after a 503): still ahead of every waiter, but spaced from the last slot as they are, so a
   * server that said 503 does not get the retries at the backoff's spacing; the pace moves on
   * by itself, so this never waits on a caller either.
   */
  acquireUrgent(stop?: AbortSignal, keepsPace = false): Promise<DispatchStamp> {
    if (this.#closed) return Promise.reject(new LimiterClosedError());
    if (stop?.aborted) return Promise.reject(new LimiterStoppedError());
    return new Promise((resolve, reject) => {
      const now = this.#timers.now();
      this.#enter({ since: now, queuedAt: now, urgent: true, keepsPace, resolve, reject }, stop, resolve);
    });
  }

  #enter(waiter: Waiter, stop: AbortSignal | undefined, resolve: (stamp: DispatchStamp) => void): void {
    if (stop !== undefined) {
      const unsubscribe = onAbort(stop, () => this.#leave(waiter));
      waiter.resolve = (stamp) => {
        unsubscribe();
        resolve(stamp);
      };
    }
    // Urgent waiters keep their own order, ahead of the rest.
    const at = waiter.urgent ? this.#waiters.findIndex((w) => !w.urgent) : -1;
    if (at < 0) this.#waiters.push(waiter);
    else this.#waiters.splice(at, 0, waiter);
    this.#pump();
  }

  /**
   * Takes a slot without waiting (a request the limiter lets through unpaced): the next paced
   * slot is spaced from it.
   */
  take(): DispatchStamp {
    if (this.#closed) throw new LimiterClosedError();
    const now = this.#timers.now();
    const rate = this.#rate();
    this.#nextAt = Math.max(this.#nextAt, now + 1000 / rate);
    return { at: now, rate, paced: false };
  }

  /**
   * Forgets the slots missed so far (after a cut): none of them is made up in a burst at the
   * server that just said stop. A slot already due later stays where it is.
   */
  restart(): void {
    this.#nextAt = Math.max(this.#nextAt, this.#timers.now());
  }

  /** Holds every request until `until` (monotonic ms). Only ever extends a pause. */
  pauseUntil(until: number): void {
    if (until <= this.#pausedUntil) return;
    this.#pausedUntil = until;
    this.#pump();
  }

  /** Drops the timer and fails every waiter, now and later, with LimiterClosedError. */
  close(): void {
    this.#closed = true;
    this.#clearTimer();
    for (const waiter of this.#waiters.splice(0)) waiter.reject(new LimiterClosedError());
  }

  /** A waiter whose stop fired: out of the line, rejected; the timer goes when no one is left. */
  #leave(waiter: Waiter): void {
    const at = this.#waiters.indexOf(waiter);
    if (at < 0) return;
    this.#waiters.splice(at, 1);
    waiter.reject(new LimiterStoppedError());
    if (this.#waiters.length === 0) this.#clearTimer();
  }

  #pump(): void {
    const now = this.#timers.now();
    const head = this.#waiters[0];
    if (head === undefined) return;
    if (head.urgent) {
      this.#pumpUrgent(head, now);
      return;
    }
    const openAt = Math.max(this.#nextAt, this.#pausedUntil);
    if (openAt > now) {
      this.#arm(openAt, now);
      return;
    }
    this.#waiters.shift();
    const rate = this.#rate();
    const interval = 1000 / rate;
    // A caller that found the gate open after an idle spell starts a new timeline from when it
    // asked; one that waited keeps the ideal timeline, making up at most `maxBurst` missed slots.
    const slot = Math.max(openAt, head.since, now - this.#maxBurst * interval);
    this.#nextAt = slot + interval;
    // The gate was shut when it came, or someone was queued behind: the rate held it back.
    const paced = openAt > head.queuedAt || this.#waiters.length > 0;
    head.resolve({ at: now, rate, paced });
    if (this.#waiters.length > 0) this.#pump();
  }

  #pumpUrgent(head: Waiter, now: number): void {
    const openAt = head.keepsPace === true ? Math.max(this.#nextAt, this.#pausedUntil) : this.#pausedUntil;
    if (openAt > now) {
      this.#arm(openAt, now);
      return;
    }
    this.#waiters.shift();
    const rate = this.#rate();
    this.#nextAt = Math.max(this.#nextAt, now + 1000 / rate);
    head.resolve({ at: now, rate, paced: false });
    if (this.#waiters.length > 0) this.#pump();
  }

  #arm(at: number, now: number): void {
    if (this.#timer !== undefined && this.#timerAt <= at) return;
    this.#clearTimer();
    this.#timerAt = at;
    this.#timer = this.#timers.setTimeout(() => {
      this.#timer = undefined;
      this.#timerAt = Number.POSITIVE_INFINITY;
      this.#pump();
    }, Math.max(0, Math.ceil(at - now)));
  }

  #clearTimer(): void {
    if (this.#timer === undefined) return;
    this.#timers.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
  }
}
