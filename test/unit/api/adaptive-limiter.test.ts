import { afterEach, describe, expect, it, vi } from 'vitest';
import { AdaptiveLimiter, LimiterClosedError, LimiterStoppedError } from '../../../src/api/adaptive-limiter.js';
import type { DispatchStamp } from '../../../src/api/rate-controller.js';
import { settle, VirtualTime } from '../../helpers/virtual-time.js';

/** Schedules `count` tasks that record when they start and take `holdMs` of virtual time. */
function load(limiter: AdaptiveLimiter, timers: VirtualTime, count: number, holdMs = 0, priority = 0): { starts: number[]; done: Promise<unknown> } {
  const starts: number[] = [];
  const done = Promise.all(
    Array.from({ length: count }, () =>
      limiter.schedule(async (stamp: DispatchStamp) => {
        starts.push(stamp.at);
        if (holdMs > 0) await new Promise<void>((resolve) => timers.setTimeout(resolve, holdMs));
      }, priority),
    ),
  );
  return { starts, done };
}

describe('pacing: evenly spaced at the current rate, not in bursts', () => {
  it('lets requests through every 1000/rate ms', async () => {
    const timers = new VirtualTime({ settleRounds: 1 });
    const limiter = new AdaptiveLimiter({ rate: 10, timers });
    const { starts, done } = load(limiter, timers, 5);
    await timers.advance(1000);
    await done;
    expect(starts).toEqual([0, 100, 200, 300, 400]);
  });

  it('a rate change applies from the next slot', async () => {
    const timers = new VirtualTime({ settleRounds: 1 });
    const limiter = new AdaptiveLimiter({ rate: 10, timers });
    const { starts } = load(limiter, timers, 4);
    await timers.advance(0);
    // A throttle cuts the rate (by 0.85 when a ceiling is set): 10 -> 8.5 req/s.
    limiter.throttle({ at: 0, rate: 10, paced: true });
    await timers.advance(1000);
    expect(starts[0]).toBe(0);
    expect(starts[1]).toBe(100);
    // Timers have millisecond resolution: the slot is at most 1 ms late.
    expect(starts[2]! - starts[1]!).toBeGreaterThanOrEqual(1000 / 8.5);
    expect(starts[2]! - starts[1]!).toBeLessThan(1000 / 8.5 + 1);
  });
});

describe('concurrency bounds the requests in flight', () => {
  it('never has more than `concurrency` running', async () => {
    const timers = new VirtualTime({ settleRounds: 1 });
    const limiter = new AdaptiveLimiter({ rate: 1000, concurrency: 2, timers });
    let running = 0;
    let peak = 0;
    const all = Promise.all(
      Array.from({ length: 6 }, () =>
        limiter.schedule(async () => {
          running += 1;
          peak = Math.max(peak, running);
          await new Promise<void>((resolve) => timers.setTimeout(resolve, 50));
          running -= 1;
        }),
      ),
    );
    await timers.advance(10);
    expect(limiter.inFlight).toBe(2);
    expect(limiter.queued).toBe(4);
    await timers.advance(500);
    await all;
    expect(peak).toBe(2);
  });

  it('checks concurrency loudly', () => {
    expect(() => new AdaptiveLimiter({ concurrency: 0 })).toThrow('Expected `concurrency` to be an integer from 1 upwards, got 0');
  });
});

describe('a Retry-After pauses the whole limiter', () => {
  it('holds every queued request until the pause ends', async () => {
    const timers = new VirtualTime({ settleRounds: 1 });
    const limiter = new AdaptiveLimiter({ rate: 100, timers });
    const first = load(limiter, timers, 1);
    await timers.advance(0);
    const result = limiter.throttle({ at: 0, rate: 100, paced: false }, 2000);
    expect(result).toMatchObject({ previousRate: 100, decreased: true, pauseMs: 2000 });
    const others = load(limiter, timers, 3);
    await timers.advance(1999);
    expect(others.starts).toEqual([]);
    await timers.advance(1000);
    await Promise.all([first.done, others.done]);
    expect(others.starts[0]).toBeGreaterThanOrEqual(2000);
  });

  it('a shorter pause never shortens a longer one', async () => {
    const timers = new VirtualTime({ settleRounds: 1 });
    const limiter = new AdaptiveLimiter({ rate: 100, timers });
    limiter.pause(3000);
    limiter.pause(1000);
    const { starts, done } = load(limiter, timers, 1);
    await timers.advance(5000);
    await done;
    expect(starts[0]).toBe(3000);
  });
});

describe('retries go first', () => {
  it('a higher priority call is let through before those queued earlier', async () => {
    const timers = new VirtualTime({ settleRounds: 1 });
    const limiter = new AdaptiveLimiter({ rate: 10, concurrency: 1, timers });
    const order: string[] = [];
    const run = (name: string, priority: number) =>
      limiter.schedule(async () => {
        order.push(name);
      }, priority);
    const all = Promise.all([run('a', 0), run('b', 0), run('c', 0), run('retry', 1)]);
    await timers.advance(1000);
    await all;
    expect(order).toEqual(['a', 'retry', 'b', 'c']);
  });
});

describe('urgent calls: the token exchange that requests holding their slots wait for', () => {
  it('goes at once though every slot of the window is held by a call waiting for it, and spaces the next slot from itself', async () => {
    const timers = new VirtualTime({ settleRounds: 1 });
    const limiter = new AdaptiveLimiter({ rate: 1, concurrency: 1, timers });
    const order: string[] = [];
    // The only slot is held by a call that waits, inside it, for the urgent one.
    const holder = limiter.schedule(async () => {
      order.push(`holder ${timers.now()}`);
      await limiter.urgent(async (stamp) => {
        order.push(`urgent ${stamp.at}`);
      });
      order.push(`holder sent ${timers.now()}`);
    });
    const behind = limiter.schedule(async (stamp) => {
      order.push(`behind ${stamp.at}`);
    });
    await timers.advance(3000);
    await Promise.all([holder, behind]);
    expect(order).toEqual(['holder 0', 'urgent 0', 'holder sent 0', 'behind 1000']);
  });

  it('goes ahead of the pace and of every waiter, but a Retry-After pause holds it', async () => {
    const timers = new VirtualTime({ settleRounds: 1 });
    const limiter = new AdaptiveLimiter({ rate: 1, timers });
    const starts: string[] = [];
    const queued = [0, 1, 2].map((i) => limiter.schedule(async (stamp) => void starts.push(`q${i} ${stamp.at}`)));
    await timers.advance(1500);
    const urgent = limiter.urgent(async (stamp) => void starts.push(`urgent ${stamp.at}`));
    await timers.advance(1);
    expect(starts).toEqual(['q0 0', 'q1 1000', 'urgent 1500']);
    limiter.pause(2000);
    const held = limiter.urgent(async (stamp) => void starts.push(`held ${stamp.at}`));
    await timers.advance(5000);
    await Promise.all([...queued, urgent, held]);
    expect(starts).toEqual(['q0 0', 'q1 1000', 'urgent 1500', 'held 3501', 'q2 4501']);
  });

  it('one whose stop fires while a pause holds it is never run', async () => {
    const timers = new VirtualTime({ settleRounds: 1 });
    const limiter = new AdaptiveLimiter({ rate: 10, timers });
    limiter.pause(1000);
    const stop = new AbortController();
    let ran = false;
    const call = limiter.urgent(async () => {
      ran = true;
    }, stop.signal);
    await timers.advance(100);
    stop.abort();
    await expect(call).rejects.toBeInstanceOf(LimiterStoppedError);
    await timers.advance(2000);
    expect(ran).toBe(false);
  });
});

describe('closing', () => {
  it('fails calls still waiting for a slot', async () => {
    const timers = new VirtualTime({ settleRounds: 1 });
    const limiter = new AdaptiveLimiter({ rate: 1, timers });
    const first = limiter.schedule(async () => 'sent');
    const second = limiter.schedule(async () => 'sent');
    await settle(1);
    limiter.close();
    await expect(first).resolves.toBe('sent');
    await expect(second).rejects.toBeInstanceOf(LimiterClosedError);
    await expect(limiter.schedule(async () => 'late')).rejects.toBeInstanceOf(LimiterClosedError);
    expect(timers.pending).toBe(0);
  });
});

describe('closing, while no limit is known', () => {
  it('a call made after closing fails, though it would have gone out unpaced', async () => {
    const timers = new VirtualTime({ settleRounds: 1 });
    const limiter = new AdaptiveLimiter({ timers });
    limiter.close();
    await expect(limiter.schedule(async () => 'late')).rejects.toBeInstanceOf(LimiterClosedError);
  });
});

describe('the rate adapts to the answers', () => {
  it('rises on paced successes and falls on a throttle', async () => {
    const timers = new VirtualTime({ settleRounds: 1 });
    const limiter = new AdaptiveLimiter({ timers });
    expect(limiter.rate).toBe(10);
    const stamps: DispatchStamp[] = [];
    const all = Promise.all(Array.from({ length: 20 }, () => limiter.schedule(async (stamp) => void stamps.push(stamp))));
    await timers.advance(3000);
    await all;
    for (const stamp of stamps) limiter.success(stamp);
    expect(limiter.rate).toBeGreaterThan(20);
    const before = limiter.rate;
    limiter.throttle(stamps.at(-1)!);
    expect(limiter.rate).toBeLessThan(before);
  });
});

describe("requests in flight follow Little's law: rate × round trip, within --concurrency", () => {
  /** Runs `count` calls that each take `latencyMs`, reporting success; returns the peak in flight and the window at the end. */
  async function run(limiter: AdaptiveLimiter, timers: VirtualTime, count: number, latencyMs: number): Promise<{ peak: number; window: number; seconds: number }> {
    let peak = 0;
    const all = Promise.all(
      Array.from({ length: count }, () =>
        limiter.schedule(async (stamp) => {
          peak = Math.max(peak, limiter.inFlight);
          await new Promise<void>((resolve) => timers.setTimeout(resolve, latencyMs));
          limiter.success(stamp);
        }),
      ),
    );
    await timers.advance(60_000);
    await all;
    return { peak, window: limiter.window, seconds: timers.now() / 1000 };
  }

  it('at 200/s and 100 ms, about 20 in flight: the window grows past the old fixed 8', async () => {
    const timers = new VirtualTime({ settleRounds: 1 });
    const limiter = new AdaptiveLimiter({ rate: 200, timers });
    const { peak, window } = await run(limiter, timers, 1000, 100);
    expect(limiter.concurrency).toBe(64);
    expect(peak).toBeGreaterThanOrEqual(20);
    // rate × (round trip + 2 deviations) + 2: the 100 ms here do not vary.
    expect(window).toBe(22);
  });

  it('--concurrency stays a ceiling', async () => {
    const timers = new VirtualTime({ settleRounds: 1 });
    const limiter = new AdaptiveLimiter({ rate: 200, concurrency: 8, timers });
    const { peak, window } = await run(limiter, timers, 200, 100);
    expect(peak).toBe(8);
    expect(window).toBe(8);
  });

  it('a short round trip needs few: the window stays small', async () => {
    const timers = new VirtualTime({ settleRounds: 1 });
    const limiter = new AdaptiveLimiter({ rate: 100, timers });
    const { window } = await run(limiter, timers, 300, 5);
    expect(window).toBe(3);
  });
});

describe('a stall is made up in a small bounded burst', () => {
  it('slots missed while the event loop was held are sent back to back, at most 4 at once, and the rate holds', async () => {
    // Every timer fires 35 ms late (a busy machine), at 100/s: 3.5 slots missed each time.
    const late = new VirtualTime({ settleRounds: 1, stall: () => 35 });
    const limiter = new AdaptiveLimiter({ rate: 100, timers: late });
    const { starts, done } = load(limiter, late, 100);
    await late.advance(10_000);
    await done;
    const span = starts.at(-1)! - starts[0]!;
    // Without making up, every slot would be 35 ms late: 100 slots in 4.5 s. Made up: about 1 s.
    expect(span).toBeLessThan(1300);
    const together = new Map<number, number>();
    for (const at of starts) together.set(at, (together.get(at) ?? 0) + 1);
    expect(Math.max(...together.values())).toBeLessThanOrEqual(5);
  });

  it('an idle spell banks nothing: the first call after it goes at once, the next one a slot later', async () => {
    const timers = new VirtualTime({ settleRounds: 1 });
    const limiter = new AdaptiveLimiter({ rate: 10, timers });
    await timers.advance(5000);
    const { starts, done } = load(limiter, timers, 3);
    await timers.advance(1000);
    await done;
    expect(starts).toEqual([5000, 5100, 5200]);
  });
});

describe('while no limit is known, calls that do not queue up go out unpaced', () => {
  it('two serial chains (a listing) are not held to the start rate of 10/s', async () => {
    const timers = new VirtualTime({ settleRounds: 1 });
    const limiter = new AdaptiveLimiter({ timers });
    const chain = async (): Promise<number> => {
      for (let page = 0; page < 20; page += 1) {
        await limiter.schedule(async (stamp) => {
          await new Promise<void>((resolve) => timers.setTimeout(resolve, 20));
          limiter.success(stamp);
        });
      }
      return timers.now();
    };
    const both = Promise.all([chain(), chain()]);
    await timers.advance(5000);
    // 20 pages of 20 ms each, the two chains side by side: 0.4 s, not 40 pages at 10/s (4 s).
    expect(Math.max(...(await both))).toBe(400);
    expect(limiter.rate).toBeGreaterThan(50);
  });
});

describe('slow start and the client loop (the system timers: node event loop utilization)', () => {
  // node's readings are scripted (a loop held by a busy-wait races the machine: preempted at
  // load 12, the 20 answers after it spanned a second window and the verdict moved).
  afterEach(() => vi.restoreAllMocks());

  it('with the system timers, slow start does not grow after the loop was held; told it is free, it does', () => {
    let now = { idle: 0, active: 0 };
    vi.spyOn(performance, 'eventLoopUtilization').mockImplementation((current, last) => {
      if (current === undefined) return { ...now, utilization: now.active / Math.max(1, now.idle + now.active) };
      const idle = current.idle - (last?.idle ?? 0);
      const active = current.active - (last?.active ?? 0);
      return { idle, active, utilization: active / Math.max(1, idle + active) };
    });
    const watched = new AdaptiveLimiter();
    const free = new AdaptiveLimiter({ clientBusy: () => false });
    const succeed = (limiter: AdaptiveLimiter): void => {
      const at = performance.now();
      limiter.success({ at, rate: limiter.rate, paced: true });
    };
    // The first answer opens the utilization's first window (and grows the rate once).
    succeed(watched);
    succeed(free);
    // The loop held for 150 ms, as a process sending and handling too much.
    now = { idle: 0, active: 150 };
    const before = { watched: watched.rate, free: free.rate };
    for (let i = 0; i < 20; i += 1) {
      succeed(watched);
      succeed(free);
    }
    expect(watched.rate).toBe(before.watched);
    expect(free.rate).toBeGreaterThan(before.free + 10);
  });
});

describe('an interrupt (a stop signal) takes waiting calls out of the line at once; they are never sent', () => {
  /** `count` calls that record their dispatch and hold their slot `holdMs` of virtual time. */
  function stoppable(limiter: AdaptiveLimiter, timers: VirtualTime, count: number, stop: AbortSignal, holdMs = 50) {
    const sent: number[] = [];
    const settled: ('sent' | 'stopped' | 'other')[] = Array.from({ length: count }, () => 'other');
    const calls = Array.from({ length: count }, (_, i) =>
      limiter
        .schedule(
          async () => {
            sent.push(i);
            await new Promise<void>((resolve) => timers.setTimeout(resolve, holdMs));
          },
          0,
          stop,
        )
        .then(
          () => void (settled[i] = 'sent'),
          (error: unknown) => void (settled[i] = error instanceof LimiterStoppedError ? 'stopped' : 'other'),
        ),
    );
    return { sent, settled, all: Promise.all(calls) };
  }

  it('a call waiting for the pace leaves at once, without a tick of time; those sent finish', async () => {
    const timers = new VirtualTime({ settleRounds: 1 });
    // One request every 100 ms: the other nine wait in the pacer.
    const limiter = new AdaptiveLimiter({ rate: 10, concurrency: 64, timers });
    const stop = new AbortController();
    const { sent, settled, all } = stoppable(limiter, timers, 10, stop.signal);
    await timers.advance(0);
    expect(sent).toEqual([0]);
    expect(limiter.queued).toBe(9);
    stop.abort(new Error('interrupted (SIGINT)'));
    // At once: no time passes, and the line is empty.
    expect(limiter.queued).toBe(0);
    await settle();
    expect(settled.filter((s) => s === 'stopped')).toHaveLength(9);
    expect(timers.now()).toBe(0);
    await timers.advance(2000);
    await all;
    // The one already sent finished; nothing else was ever dispatched.
    expect(sent).toEqual([0]);
    expect(settled[0]).toBe('sent');
    expect(limiter.inFlight).toBe(0);
  });

  it('a call waiting for a free slot (the window is full) leaves at once, and is never dispatched when the slot frees', async () => {
    const timers = new VirtualTime({ settleRounds: 1 });
    const limiter = new AdaptiveLimiter({ rate: 1000, concurrency: 2, timers });
    const stop = new AbortController();
    const { sent, settled, all } = stoppable(limiter, timers, 6, stop.signal);
    await timers.advance(5);
    expect(sent).toEqual([0, 1]);
    expect(limiter.queued).toBe(4);
    stop.abort();
    expect(limiter.queued).toBe(0);
    await settle();
    expect(settled.slice(2)).toEqual(['stopped', 'stopped', 'stopped', 'stopped']);
    // The two slots free up later: the stopped calls' turns come, and send nothing.
    await timers.advance(500);
    await all;
    expect(sent).toEqual([0, 1]);
    expect(settled.slice(0, 2)).toEqual(['sent', 'sent']);
    // A call after them is not held behind husks.
    const later = limiter.schedule(async (stamp) => stamp.at);
    await timers.advance(10);
    await expect(later).resolves.toBeGreaterThanOrEqual(0);
  });

  it('a call made after the stop is refused without being queued; calls without the signal go on', async () => {
    const timers = new VirtualTime({ settleRounds: 1 });
    const limiter = new AdaptiveLimiter({ rate: 10, timers });
    const stop = new AbortController();
    stop.abort();
    let called = false;
    await expect(limiter.schedule(async () => (called = true), 0, stop.signal)).rejects.toBeInstanceOf(LimiterStoppedError);
    expect(called).toBe(false);
    expect(limiter.queued).toBe(0);
    const other = limiter.schedule(async () => 'sent');
    await timers.advance(0);
    await expect(other).resolves.toBe('sent');
  });

  it('a deep line of waiters shares one listener on the signal (no MaxListenersExceeded warning)', async () => {
    const timers = new VirtualTime({ settleRounds: 1 });
    const limiter = new AdaptiveLimiter({ rate: 1, concurrency: 4, timers });
    const stop = new AbortController();
    const warnings: unknown[] = [];
    const onWarning = (warning: unknown): void => void warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const { all } = stoppable(limiter, timers, 50, stop.signal);
      await timers.advance(0);
      stop.abort();
      await timers.advance(2000);
      await all;
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).toEqual([]);
  });
});
