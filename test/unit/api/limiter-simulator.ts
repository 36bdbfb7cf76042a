/**
 * The adaptive limiter against a simulated server, in virtual time: fast, deterministic, and
 * independent of the machine. Used by the limiter's unit tests and by
 * test/bench/limiter-simulation.ts; the real figures come from the benchmark (npm run bench).
 *
 * Two servers: a token bucket (`limit` per second, `burst` deep; a 503 when empty), and a
 * queue (`limit` per second served one after another; latency grows with the queue, and a 503
 * when more than `queueLimit` wait) — the second shows rising latency before any 503.
 */
import { AdaptiveLimiter } from '../../../src/api/adaptive-limiter.js';
import { createRng } from '../../../src/emulator/rng.js';
import { settle, VirtualTime } from '../../helpers/virtual-time.js';
import type { Timers } from '../../../src/time/index.js';

export interface SimulationOptions {
  /** Server limit, requests per second. */
  readonly limit: number;
  /** Token-bucket capacity. */
  readonly burst: number;
  /** Service latency in ms, half before the server decides and half after. */
  readonly latencyMs: number;
  /** Extra random latency, ms. */
  readonly jitterMs?: number;
  /** Latency as the emulator draws it: uniform between 0.5 L and 1.5 L (instead of L + jitter). */
  readonly uniformLatency?: boolean;
  /** A 503 answered at once, before the latency (as the emulator does), instead of after it. */
  readonly throttleAtOnce?: boolean;
  /** Requests to complete. */
  readonly requests: number;
  /** Serial chains the requests are split into (a listing: each waits for the one before); all at once when undefined. */
  readonly chains?: number;
  /** A listing first: this many pages in each of two serial chains, then the requests (as a sync lists, then applies). */
  readonly listPages?: number;
  /** Client ceiling (--rate); none when undefined. */
  readonly ceiling?: number;
  /** Client start rate without a ceiling (`initialRate`); the limiter's default when undefined. */
  readonly initialRate?: number;
  /** `--concurrency`; the limiter's default when undefined. */
  readonly concurrency?: number;
  /** Retry-After seconds the server sends with a 503; none when undefined. */
  readonly retryAfterSeconds?: number;
  /** Retry-After as the emulator computes it: the wait for the next token, rounded up to whole seconds (at least 1). */
  readonly retryAfterFromBucket?: boolean;
  /** `queue`: a server that serves `limit` per second in turn (see above). @default 'bucket' */
  readonly server?: 'bucket' | 'queue';
  /** Requests the queue server holds before it answers 503. @default 50 */
  readonly queueLimit?: number;
  /** A busy machine: before each event, with this chance, the client's event loop stalls for `stallMs`. */
  readonly stallChance?: number;
  readonly stallMs?: number;
  /**
   * The client's own CPU per call, in ms, half to send it and half to handle its answer, on one
   * event loop: at a high rate the loop falls behind, requests already let through reach the
   * server late and a 503 is seen late (what a real client on a busy machine does). None when undefined.
   */
  readonly clientCpuMs?: number;
  readonly seed?: number;
  /**
   * The gate in front of the send (AdaptiveLimiter.heldBack, as RequestExecutor uses it); false:
   * without it, to show what it saves. @default true
   */
  readonly gate?: boolean;
}

/** The emulator's behaviour (`amsync emulator --rate-limit R --latency-ms L`): one-second burst included. */
export const emulatorLike = { uniformLatency: true, throttleAtOnce: true, retryAfterFromBucket: true } as const;

/** Figures of the requests after the listing (all of them without one). */
export interface SimulationResult {
  readonly seconds: number;
  readonly successesPerSecond: number;
  readonly ratio: number;
  readonly throttled: number;
  readonly throttledPerThousand: number;
  /** Every call, listing and 503s included. */
  readonly calls: number;
  readonly finalRate: number;
  readonly maxInFlight: number;
  /** When each 503 was answered (virtual ms from the start), in order. */
  readonly throttledAt: readonly number[];
  /** The 503s grouped into overshoots (see `overshoots`): how many each drew, in order. */
  readonly overshoots: readonly number[];
  /** Requests let through but held back before the wire by a 503 read meanwhile (and queued again). */
  readonly heldBack: number;
}

/**
 * The 503s grouped into overshoots: a 503 more than `gapMs` after the one before starts a new
 * one (a Retry-After pause and the climb back between them). The first is the discovery of R.
 */
export function overshoots(throttledAt: readonly number[], gapMs = 1500): number[] {
  const sizes: number[] = [];
  let last = Number.NEGATIVE_INFINITY;
  for (const at of throttledAt) {
    if (at - last > gapMs) sizes.push(0);
    sizes[sizes.length - 1]! += 1;
    last = at;
  }
  return sizes;
}

/** The server's decision: accepted, or a 503 with a Retry-After in ms (undefined: none). */
type Decision = { readonly ok: true; readonly queuedMs: number } | { readonly ok: false; readonly retryAfterMs: number | undefined };

function bucketServer(options: SimulationOptions, timers: VirtualTime): () => Decision {
  let tokens = options.burst;
  let refilledAt = 0;
  return () => {
    const now = timers.now();
    tokens = Math.min(options.burst, tokens + ((now - refilledAt) * options.limit) / 1000);
    refilledAt = now;
    if (tokens >= 1) {
      tokens -= 1;
      return { ok: true, queuedMs: 0 };
    }
    if (options.retryAfterFromBucket) return { ok: false, retryAfterMs: Math.max(1, Math.ceil((1 - tokens) / options.limit)) * 1000 };
    return { ok: false, retryAfterMs: options.retryAfterSeconds === undefined ? undefined : options.retryAfterSeconds * 1000 };
  };
}

function queueServer(options: SimulationOptions, timers: VirtualTime): () => Decision {
  const serviceMs = 1000 / options.limit;
  let freeAt = 0;
  return () => {
    const now = timers.now();
    const waitMs = Math.max(0, freeAt - now);
    if (waitMs / serviceMs > (options.queueLimit ?? 50)) {
      return { ok: false, retryAfterMs: options.retryAfterSeconds === undefined ? undefined : options.retryAfterSeconds * 1000 };
    }
    freeAt = Math.max(freeAt, now) + serviceMs;
    return { ok: true, queuedMs: waitMs };
  };
}

/**
 * The client's event loop as one queue: each piece of work starts when the work before it is
 * done. Its busy spells tell the share of a recent window it was busy (node's event loop
 * utilization).
 */
class ClientLoop {
  readonly #spells: [number, number][] = [];
  /** When the work queued so far is done. */
  freeAt = 0;

  /** Queues `ms` of work at `now`; returns when it is done. */
  add(now: number, ms: number): number {
    const start = Math.max(now, this.freeAt);
    this.freeAt = start + ms;
    this.#spells.push([start, this.freeAt]);
    return this.freeAt;
  }

  busyShare(now: number, windowMs: number): number {
    const from = now - windowMs;
    while (this.#spells.length > 0 && this.#spells[0]![1] <= from) this.#spells.shift();
    let busy = 0;
    for (const [start, end] of this.#spells) busy += Math.max(0, Math.min(end, now) - Math.max(start, from));
    return busy / windowMs;
  }
}

/**
 * Timers whose callbacks, once due, wait for the client loop's work queued by then, not for
 * work queued later (node runs due timers before the I/O that comes in after them).
 */
function onClientLoop(timers: VirtualTime, loop: ClientLoop): Timers {
  return {
    now: timers.now,
    wallNow: timers.wallNow,
    setTimeout: (callback, ms) => {
      // Cleared by clearTimeout whichever of its two steps is pending.
      const handle = { inner: undefined as unknown };
      handle.inner = timers.setTimeout(() => {
        const wait = loop.freeAt - timers.now();
        if (wait > 0) handle.inner = timers.setTimeout(callback, wait);
        else callback();
      }, ms);
      return handle;
    },
    clearTimeout: (handle) => timers.clearTimeout((handle as { inner: unknown }).inner),
  };
}

export async function simulate(options: SimulationOptions): Promise<SimulationResult> {
  const random = createRng(options.seed ?? 1);
  const stallRandom = createRng((options.seed ?? 1) + 1);
  const timers = new VirtualTime({ settleRounds: 1, ...(options.stallChance === undefined ? {} : { stall: () => (stallRandom() < options.stallChance! ? (options.stallMs ?? 20) : 0) }) });
  // With `clientCpuMs`, the client's event loop: requests and answers wait for the work before
  // them, and so do the limiter's own timers (a pacer cannot let a request through while the
  // loop is busy sending or handling others).
  const loop = new ClientLoop();
  const clientWork = async (): Promise<void> => {
    if (options.clientCpuMs === undefined) return;
    await delay(loop.add(timers.now(), options.clientCpuMs / 2) - timers.now());
  };
  const limiter = new AdaptiveLimiter({
    ...(options.ceiling === undefined ? {} : { rate: options.ceiling }),
    ...(options.initialRate === undefined ? {} : { initialRate: options.initialRate }),
    ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
    ...(options.clientCpuMs === undefined
      ? { timers }
      : { timers: onClientLoop(timers, loop), clientBusy: () => loop.busyShare(timers.now(), 100) >= 0.9 }),
  });
  const server = options.server === 'queue' ? queueServer(options, timers) : bucketServer(options, timers);
  let throttled = 0;
  const throttledAt: number[] = [];
  let heldBack = 0;
  let done = 0;
  let maxInFlight = 0;
  const delay = (ms: number): Promise<void> => new Promise((resolve) => timers.setTimeout(resolve, ms));
  const latency = (): number => (options.uniformLatency ? options.latencyMs * (0.5 + random()) : options.latencyMs + random() * (options.jitterMs ?? 0));

  let writesStartedAt = 0;
  let writesDone = 0;
  const one = async (write = true): Promise<void> => {
    let requeued = false;
    for (let attempt = 1; attempt <= 50; attempt += 1) {
      let retryAfterMs: number | undefined;
      const ok = await limiter.schedule(async (stamp) => {
        maxInFlight = Math.max(maxInFlight, limiter.inFlight);
        const total = latency();
        // The emulator decides as a request arrives, answers a 503 at once, and waits the
        // latency before any other answer.
        const before = options.throttleAtOnce ? 0 : total / 2;
        await clientWork();
        // The gate in front of the send (as RequestExecutor): a 503 read since this one was let
        // through holds it back, unsent, and it queues again.
        if (options.gate !== false && limiter.heldBack(stamp)) return 'held' as const;
        await delay(before);
        const decision = server();
        if (decision.ok) {
          await delay(decision.queuedMs + total - before);
          await clientWork();
          limiter.success(stamp);
          if (write) writesDone += 1;
          return true;
        }
        if (!options.throttleAtOnce) await delay(total / 2);
        await clientWork();
        throttled += 1;
        throttledAt.push(timers.now());
        retryAfterMs = decision.retryAfterMs;
        limiter.throttle(stamp, retryAfterMs);
        return false;
      }, attempt > 1 || requeued ? 1 : 0);
      if (ok === 'held') {
        heldBack += 1;
        requeued = true;
        attempt -= 1;
        continue;
      }
      if (ok) {
        done += 1;
        return;
      }
      await delay(retryAfterMs ?? random() * 250 * 2 ** (attempt - 1));
    }
  };

  const serial = (chains: number, requests: number, write: boolean): Promise<unknown> =>
    Promise.all(
      Array.from({ length: chains }, async (_, chain) => {
        for (let i = chain; i < requests; i += chains) await one(write);
      }),
    );
  const chains = options.chains;
  const all = (async () => {
    if (options.listPages !== undefined) await serial(2, 2 * options.listPages, false);
    writesStartedAt = timers.now();
    await (chains === undefined ? Promise.all(Array.from({ length: options.requests }, () => one())) : serial(chains, options.requests, true));
  })();
  let settled = false;
  void all.then(() => {
    settled = true;
  });
  await settle(1);
  for (let guard = 0; guard < 50_000_000 && !settled; guard += 1) {
    if (!timers.step()) await settle(1);
    await settle(1);
  }
  const seconds = (timers.now() - writesStartedAt) / 1000;
  return {
    seconds,
    successesPerSecond: writesDone / seconds,
    ratio: writesDone / seconds / options.limit,
    throttled,
    throttledPerThousand: (throttled * 1000) / (done + throttled),
    calls: done + throttled,
    finalRate: limiter.rate,
    maxInFlight,
    throttledAt,
    overshoots: overshoots(throttledAt),
    heldBack,
  };
}
