import { describe, expect, it } from 'vitest';
import { RateController, type DispatchStamp } from '../../../src/api/rate-controller.js';

const paced = (at: number, rate: number): DispatchStamp => ({ at, rate, paced: true });

/** Feeds `count` paced successes spread over `seconds`, starting at `from` ms. */
function succeed(controller: RateController, from: number, seconds: number, count: number): number {
  for (let i = 0; i < count; i += 1) {
    const at = from + (i * seconds * 1000) / count;
    controller.onSuccess(paced(at, controller.rate), at);
  }
  return from + seconds * 1000;
}

describe('start', () => {
  it('starts at 10 requests/s by default', () => {
    expect(new RateController().rate).toBe(10);
  });

  it('starts at the ceiling when one is given, and never exceeds it', () => {
    const controller = new RateController({ ceiling: 50, initialRate: 10 });
    expect(controller.rate).toBe(50);
    succeed(controller, 0, 10, 500);
    expect(controller.rate).toBe(50);
  });

  it('checks its options loudly', () => {
    expect(() => new RateController({ initialRate: 0 })).toThrow('Expected `initialRate` to be a number above 0, got 0');
    expect(() => new RateController({ ceiling: Number.NaN })).toThrow(/`rate`/);
    expect(() => new RateController({ decreaseFactor: 1 })).toThrow(/decreaseFactor/);
  });
});

describe('increase on success', () => {
  it('slow start: doubles about every half second while the rate holds callers back', () => {
    const controller = new RateController();
    // At 10 req/s, half a second brings ~5 paced successes: 10 + 5 * 2 ln 2 ≈ 17, then faster.
    let t = 0;
    for (let i = 0; i < 40 && controller.rate < 100; i += 1) {
      t = succeed(controller, t, 0.1, Math.max(1, Math.round(controller.rate / 10)));
    }
    expect(controller.rate).toBeGreaterThanOrEqual(100);
    expect(t).toBeLessThanOrEqual(4000);
  });

  it('does not rise when the caller, not the rate, is the bottleneck', () => {
    const controller = new RateController();
    for (let i = 0; i < 100; i += 1) controller.onSuccess({ at: i * 1000, rate: 10, paced: false }, i * 1000);
    expect(controller.rate).toBe(10);
  });
});

describe('multiplicative decrease on 503/429', () => {
  it('cuts the rate and estimates the limit just below the throttled rate', () => {
    const controller = new RateController({ initialRate: 100 });
    expect(controller.onThrottle(paced(1000, 100), 1000)).toBe(true);
    expect(controller.rate).toBeCloseTo(70);
    expect(controller.limitEstimate).toBeCloseTo(97);
  });

  it('lowers once per overload: throttles of requests sent before the cut do not cut again', () => {
    const controller = new RateController({ initialRate: 100 });
    controller.onThrottle(paced(1000, 100), 1000);
    expect(controller.onThrottle(paced(999, 100), 1005)).toBe(false);
    expect(controller.onThrottle(paced(1000, 100), 1006)).toBe(false);
    expect(controller.rate).toBeCloseTo(70);
    // A request sent after the cut that is still throttled: the overload persists.
    expect(controller.onThrottle(paced(1010, 70), 1012)).toBe(true);
    expect(controller.rate).toBeCloseTo(49);
  });

  it('never goes below the minimum rate', () => {
    const controller = new RateController({ initialRate: 1, minRate: 0.5 });
    for (let t = 0; t < 20; t += 1) controller.onThrottle(paced(t * 10, controller.rate), t * 10 + 1);
    expect(controller.rate).toBe(0.5);
  });

  it('with a ceiling: a gentler cut, and the estimate stays at or below the ceiling', () => {
    const controller = new RateController({ ceiling: 100 });
    controller.onThrottle(paced(0, 100), 1);
    expect(controller.rate).toBeCloseTo(85);
    expect(controller.limitEstimate).toBeLessThanOrEqual(100);
  });

  it('measures the limit from the successes between two throttles (a token bucket empty at both ends)', () => {
    const controller = new RateController({ initialRate: 300 });
    controller.onThrottle(paced(0, 300), 0);
    // 2 s between throttles with 200 successes: the server let 100 per second through.
    succeed(controller, 1, 2, 200);
    controller.onThrottle(paced(2000, controller.rate), 2000);
    expect(controller.limitEstimate).toBeGreaterThan(controller.rate - 1);
    expect(controller.limitEstimate).toBeLessThan(210 * 0.97 + 1);
  });
});

describe('after a throttle it climbs back, then probes above the estimate', () => {
  it('recovers to the estimate within a few seconds, then keeps probing slowly', () => {
    const controller = new RateController({ initialRate: 100 });
    controller.onThrottle(paced(0, 100), 0);
    let t = 1;
    for (let second = 0; second < 3; second += 1) t = succeed(controller, t, 1, Math.round(controller.rate));
    expect(controller.rate).toBeGreaterThan(95);
    const atEstimate = controller.rate;
    t = succeed(controller, t, 1, Math.round(controller.rate));
    // Probing: a few percent per second, not a doubling.
    expect(controller.rate).toBeGreaterThan(atEstimate);
    expect(controller.rate).toBeLessThan(atEstimate * 1.1);
  });

  it('with a ceiling it climbs back to the ceiling and stays there', () => {
    const controller = new RateController({ ceiling: 100 });
    controller.onThrottle(paced(0, 100), 0);
    let t = 1;
    for (let second = 0; second < 10; second += 1) t = succeed(controller, t, 1, Math.round(controller.rate));
    expect(controller.rate).toBe(100);
  });
});

describe('growth is capped by the rate actually used', () => {
  it('stays within twice the achieved rate even when every success looks paced', () => {
    const controller = new RateController({ initialRate: 10 });
    // 20 successes a second for 30 seconds, each marked paced (bunched arrivals).
    let t = 0;
    for (let second = 0; second < 30; second += 1) t = succeed(controller, t, 1, 20);
    // Twice 20/s, or twice what the first second measured (19 successes in 0.9 s: 21.1/s):
    // slow start begins from the rate the client is seen to use (issue 17).
    expect(controller.rate).toBeLessThanOrEqual(2 * (19 / 0.9));
    expect(controller.rate).toBeGreaterThan(20);
  });
});

describe('a saturated client loop holds the rate', () => {
  it('paced successes raise the rate only while the client is not busy', () => {
    const busy = new RateController({ initialRate: 50 });
    const free = new RateController({ initialRate: 50 });
    for (let i = 1; i <= 100; i += 1) {
      busy.onSuccess(paced(i * 20 - 10, busy.rate), i * 20, true);
      free.onSuccess(paced(i * 20 - 10, free.rate), i * 20, false);
    }
    // Busy: no more than the rate used (50/s, 54/s as first measured); free: slow start.
    expect(busy.rate).toBeLessThan(55);
    expect(free.rate).toBeGreaterThan(90);
  });

  it('with a limit known, a busy client loop does not hold the climb back to it', () => {
    const controller = new RateController({ ceiling: 200 });
    controller.onThrottle(paced(0, 200), 1);
    const cut = controller.rate;
    for (let i = 1; i <= 200; i += 1) controller.onSuccess(paced(i * 5, controller.rate), i * 5, true);
    expect(cut).toBeLessThan(200);
    expect(controller.rate).toBeGreaterThan(cut);
  });
});

describe('discovery starts from what the first responses show', () => {
  it('the rate rises at once to the rate the client is seen to use (a listing sent unpaced)', () => {
    const controller = new RateController();
    // 100 unpaced successes a second (two serial chains at 20 ms).
    for (let i = 0; i < 50; i += 1) controller.onSuccess({ at: i * 10, rate: controller.rate, paced: false }, i * 10);
    expect(controller.rate).toBeGreaterThanOrEqual(90);
  });

  it('at a high latency it starts from the unpaced window per round trip (4 every 100 ms), within twice what was used', () => {
    const controller = new RateController();
    // Three serial chains at 100 ms: 30 unpaced successes a second, for two seconds. Twice
    // that is 60/s; the window, 4 per 100 ms, is 40/s.
    for (let i = 1; i <= 60; i += 1) controller.onSuccess({ at: (i * 100) / 3 - 100, rate: controller.rate, paced: false }, (i * 100) / 3);
    expect(controller.rate).toBeGreaterThan(38);
    expect(controller.rate).toBeLessThanOrEqual(40);
  });

  it('at a low latency the window rate is bounded by twice the rate used, not 4 per round trip', () => {
    const controller = new RateController();
    // One chain at 5 ms, 1 success each 50 ms (the caller is slow): 20 a second used.
    for (let i = 1; i <= 40; i += 1) controller.onSuccess({ at: i * 50 - 5, rate: controller.rate, paced: false }, i * 50);
    // Twice the first measurement (6 successes in its first 250 ms: 24/s), far below 4 per 5 ms.
    expect(controller.rate).toBeLessThanOrEqual(48);
    expect(controller.rate).toBeGreaterThan(35);
  });

  it('an unpaced success of a request sent before the last decrease does not lift the start rate to the window', () => {
    const controller = new RateController();
    // 7 unpaced successes at a 5 ms round trip: too few, too soon, for a rate.
    for (let t = 10; t <= 70; t += 10) controller.onSuccess({ at: t - 5, rate: controller.rate, paced: false }, t);
    // An unpaced call refused before a rate is known: slower, still no limit.
    controller.onThrottle({ at: 74, rate: controller.rate, paced: false }, 75);
    expect(controller.limitEstimate).toBeUndefined();
    // Paced successes sent after it, then one sent before it (at 74), answered at 260 ms.
    for (let t = 80; t <= 250; t += 10) controller.onSuccess(paced(t - 5, controller.rate), t);
    controller.onSuccess({ at: 74, rate: controller.rate, paced: false }, 260);
    // 26 successes in the 250 ms since the first: 104/s. The window (4 per smoothed round
    // trip, ~28 ms after the late answer: ~145/s) is not taken from a request that predates
    // the decrease.
    expect(controller.rate).toBeCloseTo(104, 0);
  });

  it('an unpaced call refused before any rate is measured only slows down: no estimate from it', () => {
    const controller = new RateController();
    expect(controller.onThrottle({ at: 0, rate: 10, paced: false }, 1)).toBe(true);
    expect(controller.limitEstimate).toBeUndefined();
    expect(controller.rate).toBeCloseTo(7);
    // ... and unpaced calls stop: everything is paced from then on.
    expect(controller.discovering).toBe(false);
  });

  it('a queue building at the server (round-trip minimum rising) ends the start and holds what the server serves', () => {
    const controller = new RateController();
    let t = 0;
    // 100/s answered in 20 ms, then the same rate answered ever later: requests wait in a queue.
    for (let i = 0; i < 200; i += 1, t += 10) controller.onSuccess({ at: t - 20, rate: controller.rate, paced: true }, t);
    expect(controller.limitEstimate).toBeUndefined();
    for (let i = 0; i < 200 && controller.limitEstimate === undefined; i += 1, t += 10) {
      controller.onSuccess({ at: t - 20 - 2 * i, rate: controller.rate, paced: true }, t);
    }
    expect(controller.limitEstimate).toBeGreaterThan(80);
    expect(controller.limitEstimate).toBeLessThan(130);
    expect(controller.rate).toBeLessThanOrEqual(controller.limitEstimate!);
  });
});
