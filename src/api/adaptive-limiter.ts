import PQueue from 'p-queue';
import { LimiterStoppedError, Pacer } from './pacer.js';
export { LimiterClosedError, LimiterStoppedError } from './pacer.js';
import { RateController, unpacedWindow, type DispatchStamp } from './rate-controller.js';
import { onAbort, systemTimers, type Timers } from '../time/index.js';
import { eventLoopBusy } from './loop-load.js';

/** Requests in flight at most unless `--concurrency` says otherwise: a ceiling, not a target. */
export const defaultConcurrency = 64;

export interface AdaptiveLimiterOptions {
  /** Requests per second to start at when no ceiling is known, for calls that queue up. @default 10 */
  readonly initialRate?: number;
  /** Ceiling in requests per second (`--rate`, the server's known limit); also the start rate. */
  readonly rate?: number;
  /**
   * Requests in flight at most (`--concurrency`): a ceiling. Below it the window is what the
   * rate needs at the measured latency (Little's law). @default 64
   */
  readonly concurrency?: number;
  /** @default 0.5 */
  readonly minRate?: number;
  readonly timers?: Timers;
  /**
   * Whether the client's own event loop is saturated (slow start then does not grow the rate).
   * @default node's event loop utilization over 100 ms ≥ 0.9 with the system timers; never
   * with others (virtual time)
   */
  readonly clientBusy?: () => boolean;
}

export interface ThrottleResult {
  readonly previousRate: number;
  readonly rate: number;
  /** Whether this throttle lowered the rate (one decrease per overload, see RateController). */
  readonly decreased: boolean;
  /** How long the whole limiter is now paused by a Retry-After, 0 when not. */
  readonly pauseMs: number;
}

/** What the limiter exposes to the rest of amsync (e.g. to print or export the rate). */
export interface LimiterView {
  /** Current rate in requests per second. */
  readonly rate: number;
  readonly ceiling: number | undefined;
  /** What the limiter believes the server's limit is; undefined until the first 503/429 (or the ceiling). */
  readonly limitEstimate: number | undefined;
  /** The ceiling on requests in flight (`--concurrency`). */
  readonly concurrency: number;
  /** Requests in flight allowed now: enough for the rate at the measured latency, within the ceiling. */
  readonly window: number;
  /** Requests sent and not yet answered. */
  readonly inFlight: number;
  /** Calls waiting for their turn. */
  readonly queued: number;
}

// Requests in flight before any latency is measured (TCP's initial window is 10 segments).
const initialWindow = 8;
// Above rate × (mean + 2 deviations of the round trip): a slot or two for the request being
// paced and the one being answered.
const spareWindow = 2;

/**
 * One per service, shared by every call (listing included). p-queue bounds the requests in
 * flight and orders the callers (retries first); a Pacer spaces them at the current rate;
 * a RateController adapts that rate to the server's answers. The bound on requests in flight
 * follows Little's law: rate × round-trip time, with room for jitter, within `concurrency`;
 * so the rate is reached at any latency, and a server that slows down does not draw an
 * ever-growing crowd of requests.
 */
export class AdaptiveLimiter implements LimiterView {
  readonly #queue: PQueue;
  readonly #pacer: Pacer;
  readonly #controller: RateController;
  readonly #timers: Timers;
  readonly #ceiling: number;
  readonly #clientBusy: () => boolean;
  #inFlight = 0;
  /** Calls stopped while in p-queue's line: it cannot take an entry out, so each stays, empty, until its turn. */
  #husks = 0;
  /** Times the requests were held back (a cut, a Retry-After): see heldBack. */
  #holds = 0;

  constructor(options: AdaptiveLimiterOptions = {}) {
    const concurrency = options.concurrency ?? defaultConcurrency;
    if (!(Number.isInteger(concurrency) && concurrency >= 1)) {
      throw new RangeError(`Expected \`concurrency\` to be an integer from 1 upwards, got ${String(concurrency)}`);
    }
    this.#timers = options.timers ?? systemTimers;
    this.#clientBusy = options.clientBusy ?? (this.#timers === systemTimers ? eventLoopBusy() : () => false);
    this.#controller = new RateController({
      initialRate: options.initialRate,
      ceiling: options.rate,
      minRate: options.minRate,
    });
    this.#pacer = new Pacer({ rate: () => this.#controller.rate, timers: this.#timers });
    this.#ceiling = concurrency;
    this.#queue = new PQueue({ concurrency: Math.min(concurrency, initialWindow) });
  }

  get rate(): number {
    return this.#controller.rate;
  }

  get ceiling(): number | undefined {
    return this.#controller.ceiling;
  }

  get limitEstimate(): number | undefined {
    return this.#controller.limitEstimate;
  }

  get concurrency(): number {
    return this.#ceiling;
  }

  get window(): number {
    return this.#queue.concurrency;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  get queued(): number {
    return this.#queue.size - this.#husks + this.#pacer.waiting;
  }

  /**
   * Runs `send` when a slot is free and the pace allows. `send` gets the dispatch stamp to
   * report back with `success` or `throttle`. Higher `priority` goes first (retries, so a
   * listing that hit a 503 is not sent to the back of a thousand queued writes). Once `stop`
   * fires (an interrupt) a call still waiting leaves the line at once with LimiterStoppedError,
   * and `send` is never called for it; one whose `send` has begun is not touched.
   */
  schedule<T>(send: (stamp: DispatchStamp) => Promise<T>, priority = 0, stop?: AbortSignal): Promise<T> {
    if (stop?.aborted) return Promise.reject(new LimiterStoppedError());
    const since = this.#timers.now();
    const alone = this.queued === 0;
    const dispatch = async (): Promise<T> => {
      const unpaced = alone && this.#controller.discovering && this.#inFlight < unpacedWindow && this.#pacer.pausedUntil <= this.#timers.now();
      const slot = unpaced ? this.#pacer.take() : await this.#pacer.acquire(since, stop);
      const stamp: DispatchStamp = { ...slot, holds: this.#holds };
      // Let through by the pacer, but stopped before this turn came: still never sent.
      if (stop?.aborted) throw new LimiterStoppedError();
      this.#inFlight += 1;
      try {
        return await send(stamp);
      } finally {
        this.#inFlight -= 1;
      }
    };
    if (stop === undefined) return this.#queue.add(dispatch, { priority, throwOnTimeout: true });
    return this.#stoppable(dispatch, priority, stop);
  }

  /**
   * Runs `send` for a call that requests holding their slots wait for (the token exchange an
   * access token too old to send waits for): past p-queue's line and its window, and ahead of
   * the pace (Pacer.acquireUrgent), so waiting for it in a slot can never deadlock however full
   * the window is; a Retry-After pause still holds it, and the next slot is spaced from it.
   * `keepsPace` (a retry after a 503 or 429): ahead of the line and past the window still, but
   * spaced at the pace (Pacer.acquireUrgent).
   */
  async urgent<T>(send: (stamp: DispatchStamp) => Promise<T>, stop?: AbortSignal, keepsPace = false): Promise<T> {
    const slot = await this.#pacer.acquireUrgent(stop, keepsPace);
    this.#inFlight += 1;
    try {
      return await send({ ...slot, holds: this.#holds });
    } finally {
      this.#inFlight -= 1;
    }
  }

  /** A call that leaves p-queue's line when `stop` fires: rejected at once, its entry left as an empty husk. */
  #stoppable<T>(dispatch: () => Promise<T>, priority: number, stop: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let waiting = true;
      const unsubscribe = onAbort(stop, () => {
        if (!waiting) return;
        waiting = false;
        this.#husks += 1;
        reject(new LimiterStoppedError());
      });
      const turn = async (): Promise<void> => {
        if (!waiting) {
          this.#husks -= 1;
          return;
        }
        waiting = false;
        unsubscribe();
        try {
          resolve(await dispatch());
        } catch (error) {
          reject(error);
        }
      };
      void this.#queue.add(turn, { priority, throwOnTimeout: true }).catch(reject);
    });
  }

  success(stamp: DispatchStamp): void {
    this.#controller.onSuccess(stamp, this.#timers.now(), this.#clientBusy());
    this.#fitWindow();
  }

  /** A 503 or 429: lower the rate, and pause everyone for `retryAfterMs` when the server said so. */
  throttle(stamp: DispatchStamp, retryAfterMs?: number): ThrottleResult {
    const previousRate = this.#controller.rate;
    const now = this.#timers.now();
    const pauseMs = retryAfterMs !== undefined && retryAfterMs > 0 ? retryAfterMs : 0;
    const decreased = this.#controller.onThrottle(stamp, now, pauseMs);
    if (pauseMs > 0) this.pause(pauseMs);
    if (decreased) {
      // The first 503 of an overload: what was let through at the old rate and is not on the
      // wire yet is held back (heldBack), and the pace starts again from now at the new rate.
      this.#holds += 1;
      this.#pacer.restart();
    }
    this.#fitWindow();
    return { previousRate, rate: this.#controller.rate, decreased, pauseMs };
  }

  /**
   * Whether a request let through with `stamp` must not go on the wire after all: the limiter
   * has cut its rate or paused since (a 503 came back), so the server's bucket is empty and a
   * request sent now would only draw another 503. The caller gives its slot back and schedules
   * the request again (it was never sent, so nothing is repeated). The gate in front of the send.
   */
  heldBack(stamp: DispatchStamp): boolean {
    return (stamp.holds !== undefined && stamp.holds < this.#holds) || this.#pacer.pausedUntil > this.#timers.now();
  }

  /** Little's law: the requests in flight that the rate needs at the measured round trip. */
  #fitWindow(): void {
    const rtt = this.#controller.rtt.high;
    if (rtt === undefined) return;
    const needed = Math.ceil((this.#controller.rate * rtt) / 1000) + spareWindow;
    const window = Math.min(this.#ceiling, Math.max(1, needed));
    if (window !== this.#queue.concurrency) this.#queue.concurrency = window;
  }

  /** Holds every request for `ms` (a Retry-After). */
  pause(ms: number): void {
    const until = this.#timers.now() + ms;
    if (until > this.#pacer.pausedUntil) this.#holds += 1;
    this.#pacer.pauseUntil(until);
  }

  /** Calls waiting for a slot, and any made later, fail with LimiterClosedError. */
  close(): void {
    this.#pacer.close();
  }
}
