import type { DispatchStamp } from './rate-controller.js';
import type { Timers } from './timers.js';

export interface PacerOptions {
  /** Current rate in requests per second; read at every slot, so changes apply at once. */
  readonly rate: () => number;
  readonly timers: Timers;
  /**
   * How far a slot may lag its ideal time and still keep the ideal timeline, as a fraction of
   * the interval. Timers fire late by a millisecond or so; re-anchoring on every late slot would
   * lose that much per request (10 % at 100 req/s). Bounded, so an idle spell never banks
   * a burst. @default 0.5
   */
  readonly lagTolerance?: number;
}

interface Waiter {
  readonly queuedAt: number;
  readonly resolve: (stamp: DispatchStamp) => void;
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
 * Lets requests through one at a time, evenly spaced at `1000 / rate` ms, in FIFO order.
 * Even spacing rather than bursts: a server that meters with a small token bucket rejects
 * bursts even when the average is within its limit. `pauseUntil` holds everyone back
 * (a Retry-After applies to the whole client, not to one request).
 */
export class Pacer {
  readonly #rate: () => number;
  readonly #timers: Timers;
  readonly #lagTolerance: number;
  readonly #waiters: Waiter[] = [];
  #nextAt = Number.NEGATIVE_INFINITY;
  #pausedUntil = Number.NEGATIVE_INFINITY;
  #timer: unknown;
  #timerAt = Number.POSITIVE_INFINITY;
  #closed = false;

  constructor(options: PacerOptions) {
    this.#rate = options.rate;
    this.#timers = options.timers;
    this.#lagTolerance = options.lagTolerance ?? 0.5;
  }

  get waiting(): number {
    return this.#waiters.length;
  }

  /** Resolves when the caller may send. */
  acquire(): Promise<DispatchStamp> {
    if (this.#closed) return Promise.reject(new LimiterClosedError());
    return new Promise((resolve, reject) => {
      this.#waiters.push({ queuedAt: this.#timers.now(), resolve, reject });
      this.#pump();
    });
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

  #pump(): void {
    const now = this.#timers.now();
    const head = this.#waiters[0];
    if (head === undefined) return;
    const openAt = Math.max(this.#nextAt, this.#pausedUntil);
    if (openAt > now) {
      this.#arm(openAt, now);
      return;
    }
    this.#waiters.shift();
    const rate = this.#rate();
    const interval = 1000 / rate;
    // A caller that found the gate open (an idle spell) starts a new timeline from now; one
    // that waited for its slot keeps the ideal timeline despite a late timer.
    const slot = head.queuedAt >= openAt ? now : Math.max(openAt, now - this.#lagTolerance * interval);
    this.#nextAt = slot + interval;
    // The gate was shut when it came, or someone was queued behind: the rate held it back.
    const paced = openAt > head.queuedAt || this.#waiters.length > 0;
    head.resolve({ at: now, rate, paced });
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
