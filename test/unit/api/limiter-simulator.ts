/**
 * The adaptive limiter against a simulated token-bucket server, in virtual time: fast,
 * deterministic, and independent of the machine. Used by the limiter's unit tests and by
 * test/bench/limiter-simulation.ts; the real figures come from test/bench/limiter-probe.ts.
 */
import { AdaptiveLimiter } from '../../../src/api/adaptive-limiter.js';
import type { Timers } from '../../../src/api/timers.js';

export interface SimulationOptions {
  /** Server limit, requests per second. */
  readonly limit: number;
  /** Token-bucket capacity. */
  readonly burst: number;
  /** One-way service latency in ms (the answer comes after this). */
  readonly latencyMs: number;
  /** Extra random latency, ms. */
  readonly jitterMs?: number;
  /** Requests to complete. */
  readonly requests: number;
  /** Client ceiling (--rate); none when undefined. */
  readonly ceiling?: number;
  readonly concurrency?: number;
  /** Retry-After seconds the server sends with a 503; none when undefined. */
  readonly retryAfterSeconds?: number;
  readonly seed?: number;
}

export interface SimulationResult {
  readonly seconds: number;
  readonly successesPerSecond: number;
  readonly ratio: number;
  readonly throttled: number;
  readonly throttledPerThousand: number;
  readonly finalRate: number;
}

/** Lets every settled promise run its continuations. */
export const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Timers on a virtual clock: nothing waits for real, events run in time order. */
export class VirtualTimers implements Timers {
  #now = 0;
  #seq = 0;
  readonly #events = new Map<number, { at: number; callback: () => void }>();
  now(): number {
    return this.#now;
  }
  wallNow(): number {
    return 1_700_000_000_000 + this.#now;
  }
  setTimeout(callback: () => void, ms: number): unknown {
    const id = ++this.#seq;
    this.#events.set(id, { at: this.#now + Math.max(0, ms), callback });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.#events.delete(handle as number);
  }
  get pending(): number {
    return this.#events.size;
  }
  /** Runs the earliest event, if it is due by `until`; false when none is. */
  step(until = Number.POSITIVE_INFINITY): boolean {
    let first: [number, { at: number; callback: () => void }] | undefined;
    for (const entry of this.#events) {
      if (first === undefined || entry[1].at < first[1].at || (entry[1].at === first[1].at && entry[0] < first[0])) first = entry;
    }
    if (first === undefined || first[1].at > until) return false;
    this.#events.delete(first[0]);
    this.#now = Math.max(this.#now, first[1].at);
    first[1].callback();
    return true;
  }
  /** Moves the clock forward by `ms`, running every event due on the way (and the promises they settle). */
  async advance(ms: number): Promise<void> {
    const until = this.#now + ms;
    await flush();
    for (let guard = 0; guard < 1_000_000 && this.step(until); guard += 1) await flush();
    this.#now = until;
    await flush();
  }
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}


export async function simulate(options: SimulationOptions): Promise<SimulationResult> {
  const timers = new VirtualTimers();
  const random = mulberry32(options.seed ?? 1);
  const limiter = new AdaptiveLimiter({ rate: options.ceiling, concurrency: options.concurrency ?? 8, timers });
  let tokens = options.burst;
  let refilledAt = 0;
  let throttled = 0;
  let done = 0;

  const server = (): boolean => {
    const now = timers.now();
    tokens = Math.min(options.burst, tokens + ((now - refilledAt) * options.limit) / 1000);
    refilledAt = now;
    if (tokens >= 1) {
      tokens -= 1;
      return true;
    }
    return false;
  };
  const delay = (ms: number): Promise<void> => new Promise((resolve) => timers.setTimeout(resolve, ms));

  const one = async (): Promise<void> => {
    for (let attempt = 1; attempt <= 50; attempt += 1) {
      const ok = await limiter.schedule(async (stamp) => {
        await delay(options.latencyMs / 2 + random() * (options.jitterMs ?? 0));
        const accepted = server();
        await delay(options.latencyMs / 2);
        if (accepted) limiter.success(stamp);
        else {
          throttled += 1;
          limiter.throttle(stamp, options.retryAfterSeconds === undefined ? undefined : options.retryAfterSeconds * 1000);
        }
        return accepted;
      }, attempt > 1 ? 1 : 0);
      if (ok) {
        done += 1;
        return;
      }
      await delay(options.retryAfterSeconds === undefined ? random() * 250 * 2 ** (attempt - 1) : options.retryAfterSeconds * 1000);
    }
  };

  const all = Promise.all(Array.from({ length: options.requests }, () => one()));
  let settled = false;
  void all.then(() => {
    settled = true;
  });
  await flush();
  for (let guard = 0; guard < 50_000_000 && !settled; guard += 1) {
    if (!timers.step()) await flush();
    await flush();
  }
  const seconds = timers.now() / 1000;
  return {
    seconds,
    successesPerSecond: done / seconds,
    ratio: done / seconds / options.limit,
    throttled,
    throttledPerThousand: (throttled * 1000) / (done + throttled),
    finalRate: limiter.rate,
  };
}

