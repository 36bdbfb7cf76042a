import { describe, expect, it } from 'vitest';
import { AdaptiveLimiter } from '../../../src/api/adaptive-limiter.js';
import { RateController } from '../../../src/api/rate-controller.js';
import { VirtualTime } from '../../helpers/virtual-time.js';
import { emulatorLike, simulate } from './limiter-simulator.js';

/**
 * Issue 32, item 1: polite discovery of a limit hidden behind a token bucket with one second of
 * burst. In virtual time (deterministic), so the counts are exact; the real runs are scenario 13
 * of the benchmark (`npm run bench -- --only discovery`).
 */
const noRetryAfter = { uniformLatency: true, throttleAtOnce: true } as const;
const fastServer = { limit: 50, burst: 50, latencyMs: 0.5, requests: 1200, listPages: 1 } as const;

describe('a fast server (R = 50/s, one-second burst, ~0 ms latency), 1,200 creates', () => {
  it('without Retry-After: 2 503s at the first discovery, 4 in the run (3.32 per 1,000), the whole rate', async () => {
    // Before: 14 at the first overshoot and 18 in the run (14.75 per 1,000): each 503 cut the
    // rate from what the last second's successes showed (the burst's), and the climb back to
    // the rate that drew it was quick.
    const result = await simulate({ ...fastServer, ...noRetryAfter });
    expect(result.overshoots).toEqual([2, 1, 1]);
    expect(result.throttled).toBe(4);
    expect(result.throttledPerThousand).toBeLessThanOrEqual(5);
    expect(result.ratio).toBeGreaterThanOrEqual(0.9);
  });

  it('with the emulator Retry-After: 1 503 at the first discovery, 4 in the run (one per overshoot)', async () => {
    // Before: 5 overshoots of 1 (4.14 per 1,000): a probe above a measured limit came every few seconds.
    const result = await simulate({ ...fastServer, ...emulatorLike });
    expect(result.overshoots).toEqual([1, 1, 1, 1]);
    expect(result.throttledPerThousand).toBeLessThanOrEqual(5);
    expect(result.ratio).toBeGreaterThanOrEqual(0.9);
  });

  it('on a loaded client (3 ms a call, the loop held 50 ms before 2 % of events) the gate in front of the send holds back what a 503 finds unsent', async () => {
    // What the gate saves, seeds 1-5: the first overshoot with it and without it.
    const firsts = async (gate: boolean): Promise<{ first: number[]; held: number[] }> => {
      const first: number[] = [];
      const held: number[] = [];
      for (const seed of [1, 2, 3, 4, 5]) {
        const result = await simulate({ ...fastServer, ...noRetryAfter, clientCpuMs: 3, stallChance: 0.02, stallMs: 50, seed, gate });
        first.push(result.overshoots[0] ?? 0);
        held.push(result.heldBack);
        expect(result.ratio).toBeGreaterThanOrEqual(0.9);
      }
      return { first, held };
    };
    const withGate = await firsts(true);
    const withoutGate = await firsts(false);
    expect(withGate.first).toEqual([5, 4, 3, 4, 3]);
    expect(withGate.held).toEqual([1, 6, 0, 4, 1]);
    expect(withoutGate.first).toEqual([6, 8, 3, 8, 3]);
  });
});

describe('R = 200/s at R·L 10 and 20 keeps its figures (≤ 5 503s per 1,000 calls, ≥ 0.90 of R)', () => {
  for (const [latencyMs, how, server, first] of [
    [50, 'Retry-After', emulatorLike, 1],
    [100, 'Retry-After', emulatorLike, 1],
    [50, 'no Retry-After', noRetryAfter, 2],
    [100, 'no Retry-After', noRetryAfter, 2],
  ] as const) {
    it(`L = ${latencyMs} ms, ${how}: ${first} at the first discovery`, async () => {
      // Before, without Retry-After: 39-40 503s at the first overshoot (19 per 1,000).
      const result = await simulate({ limit: 200, burst: 200, latencyMs, requests: 2000, listPages: 10, ...server });
      expect(result.overshoots[0]).toBe(first);
      expect(result.throttledPerThousand).toBeLessThanOrEqual(5);
      expect(result.ratio).toBeGreaterThanOrEqual(0.9);
    });
  }
});

describe('the control law', () => {
  /** Slow start from 10/s, at full demand, for `ms`: paced successes at the current rate. */
  function slowStart(controller: RateController, ms: number): number {
    let t = 0;
    while (t < ms) {
      controller.onSuccess({ at: t, rate: controller.rate, paced: true }, t);
      t += 1000 / controller.rate;
    }
    return t;
  }

  it('a 503 without Retry-After after slow start halves the rate, again while the limit is only guessed; a Retry-After keeps the gentler cut', () => {
    const guessed = new RateController();
    let t = slowStart(guessed, 2000);
    const peak = guessed.rate;
    guessed.onThrottle({ at: t, rate: peak, paced: true }, t);
    expect(guessed.rate).toBeCloseTo(peak / 2, 6);
    t += 10;
    guessed.onThrottle({ at: t, rate: guessed.rate, paced: true }, t);
    expect(guessed.rate).toBeCloseTo(peak / 4, 6);

    const told = new RateController();
    t = slowStart(told, 2000);
    told.onThrottle({ at: t, rate: told.rate, paced: true }, t, 1000);
    expect(told.rate).toBeCloseTo(peak * 0.7, 6);
  });

  it('the cut follows the rate the request went out at, not the successes the burst paid for', () => {
    const controller = new RateController();
    const t = slowStart(controller, 2000);
    const rate = controller.rate;
    // A paced request sent at a quarter of the rate (after cuts): its 503 halves that.
    controller.onThrottle({ at: t, rate: rate / 4, paced: true }, t);
    expect(controller.rate).toBeCloseTo(rate / 8, 6);
  });
});

describe('the gate in front of the send', () => {
  it('a request let through before a 503 is read is held back; one let through after it is not', async () => {
    const timers = new VirtualTime({ settleRounds: 1 });
    const limiter = new AdaptiveLimiter({ rate: 100, timers });
    const stamps: Parameters<AdaptiveLimiter['heldBack']>[0][] = [];
    const sent = Promise.all([0, 1].map(() => limiter.schedule(async (stamp) => stamps.push(stamp))));
    await timers.advance(20);
    await sent;
    const [before] = stamps;
    expect(limiter.heldBack(before!)).toBe(false);
    const result = limiter.throttle(stamps[1]!);
    expect(result.decreased).toBe(true);
    expect(limiter.heldBack(before!)).toBe(true);
    let after: (typeof stamps)[number] | undefined;
    const next = limiter.schedule(async (stamp) => {
      after = stamp;
    });
    await timers.advance(100);
    await next;
    expect(limiter.heldBack(after!)).toBe(false);
  });

  it('a Retry-After pause holds back what was let through before it', async () => {
    const timers = new VirtualTime({ settleRounds: 1 });
    const limiter = new AdaptiveLimiter({ rate: 100, timers });
    let stamp: Parameters<AdaptiveLimiter['heldBack']>[0] | undefined;
    const sent = limiter.schedule(async (s) => {
      stamp = s;
    });
    await timers.advance(0);
    await sent;
    limiter.pause(1000);
    expect(limiter.heldBack(stamp!)).toBe(true);
  });
});
