import { describe, expect, it } from 'vitest';
import { Debouncer, SyncLoop, type RunVerdict, type TriggerReason } from '../../../src/daemon/index.js';
import { deferred, type Deferred } from '../../helpers/daemon-deferred.js';
import { VirtualTime, settle } from '../../helpers/virtual-time.js';

describe('debounce: a burst of file events is one check', () => {
  it('fires once, waitMs after the last event', async () => {
    const timers = new VirtualTime();
    let fired = 0;
    const d = new Debouncer(timers, 500, () => (fired += 1));
    d.poke();
    await timers.advance(300);
    d.poke();
    await timers.advance(300);
    d.poke();
    await timers.advance(499);
    expect(fired).toBe(0);
    await timers.advance(1);
    expect(fired).toBe(1);
    await timers.advance(10_000);
    expect(fired).toBe(1);
  });

  it('fires at the latest maxWaitMs after the first event, even if events never stop', async () => {
    const timers = new VirtualTime();
    let fired = 0;
    const d = new Debouncer(timers, 500, () => (fired += 1), 2000);
    for (let i = 0; i < 10; i += 1) {
      d.poke();
      await timers.advance(250);
    }
    expect(fired).toBe(1);
  });

  it('does nothing once closed', async () => {
    const timers = new VirtualTime();
    let fired = 0;
    const d = new Debouncer(timers, 100, () => (fired += 1));
    d.poke();
    d.close();
    d.poke();
    await timers.advance(1000);
    expect(fired).toBe(0);
  });
});

/** A run function whose runs the test finishes by hand. */
function controllableRuns() {
  const calls: { reasons: readonly TriggerReason[]; done: Deferred<RunVerdict> }[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const run = async (reasons: readonly TriggerReason[]): Promise<RunVerdict> => {
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const done = deferred<RunVerdict>();
    calls.push({ reasons, done });
    try {
      return await done.promise;
    } finally {
      inFlight -= 1;
    }
  };
  return { calls, run, maxInFlight: () => maxInFlight };
}

describe('single flight: never two syncs at once', () => {
  it('runs once for triggers in the same tick', async () => {
    const timers = new VirtualTime();
    const runs = controllableRuns();
    const loop = new SyncLoop({ run: runs.run, timers, backoff: { baseMs: 1000, maxMs: 8000 }, random: () => 1 });
    loop.trigger('start');
    loop.trigger('file');
    await settle();
    expect(runs.calls).toHaveLength(1);
    expect(runs.calls[0]!.reasons).toEqual(['start', 'file']);
    runs.calls[0]!.done.resolve({ retry: false });
    await loop.idle();
    expect(runs.calls).toHaveLength(1);
  });

  it('coalesces every trigger that arrives during a run into exactly one follow-up run', async () => {
    const timers = new VirtualTime();
    const runs = controllableRuns();
    const loop = new SyncLoop({ run: runs.run, timers, backoff: { baseMs: 1000, maxMs: 8000 }, random: () => 1 });
    loop.trigger('start');
    await settle();
    for (const reason of ['file', 'schedule', 'file', 'reload', 'schedule'] as const) loop.trigger(reason);
    await settle();
    expect(runs.calls).toHaveLength(1);
    runs.calls[0]!.done.resolve({ retry: false });
    await settle();
    expect(runs.calls).toHaveLength(2);
    expect([...runs.calls[1]!.reasons].sort()).toEqual(['file', 'reload', 'schedule']);
    loop.trigger('file');
    runs.calls[1]!.done.resolve({ retry: false });
    await settle();
    expect(runs.calls).toHaveLength(3);
    runs.calls[2]!.done.resolve({ retry: false });
    await loop.idle();
    expect(runs.calls).toHaveLength(3);
    expect(runs.maxInFlight()).toBe(1);
  });

  it('retries a failed run with growing delays, and any trigger replaces the wait', async () => {
    const timers = new VirtualTime();
    const runs = controllableRuns();
    const scheduled: number[] = [];
    const loop = new SyncLoop({ run: runs.run, timers, backoff: { baseMs: 1000, maxMs: 8000 }, random: () => 1, onRetryScheduled: (ms) => scheduled.push(ms) });
    loop.trigger('start');
    await settle();
    runs.calls[0]!.done.resolve({ retry: true });
    await settle();
    expect(loop.retryScheduled).toBe(true);
    await timers.advance(999);
    expect(runs.calls).toHaveLength(1);
    await timers.advance(1);
    expect(runs.calls).toHaveLength(2);
    expect(runs.calls[1]!.reasons).toEqual(['retry']);
    runs.calls[1]!.done.resolve({ retry: true });
    await settle();
    await timers.advance(1999);
    expect(runs.calls).toHaveLength(2);
    // A file change comes first: it runs now, and the pending retry is dropped.
    loop.trigger('file');
    await settle();
    expect(runs.calls).toHaveLength(3);
    expect(loop.retryScheduled).toBe(false);
    runs.calls[2]!.done.resolve({ retry: true });
    await settle();
    expect(scheduled).toEqual([1000, 2000, 4000]);
    await timers.advance(4000);
    runs.calls[3]!.done.resolve({ retry: false });
    await loop.idle();
    expect(loop.failures).toBe(0);
    expect(loop.retryScheduled).toBe(false);
    await timers.advance(100_000);
    expect(runs.calls).toHaveLength(4);
  });

  it('treats a run that throws as one to retry, and keeps going', async () => {
    const timers = new VirtualTime();
    const errors: unknown[] = [];
    let n = 0;
    const loop = new SyncLoop({
      run: async () => {
        n += 1;
        if (n === 1) throw new Error('boom');
        return { retry: false };
      },
      timers,
      backoff: { baseMs: 1000, maxMs: 8000 },
      random: () => 0,
      onRunError: (e) => errors.push(e),
    });
    loop.trigger('start');
    await loop.idle();
    expect(errors).toHaveLength(1);
    expect(loop.failures).toBe(1);
    await timers.advance(500);
    expect(n).toBe(2);
  });

  it('stop drops pending triggers and the retry, and lets the current run finish', async () => {
    const timers = new VirtualTime();
    const runs = controllableRuns();
    const loop = new SyncLoop({ run: runs.run, timers, backoff: { baseMs: 1000, maxMs: 8000 }, random: () => 1 });
    loop.trigger('start');
    await settle();
    loop.trigger('file');
    let idle = false;
    void loop.stop().then(() => (idle = true));
    await settle();
    expect(idle).toBe(false);
    runs.calls[0]!.done.resolve({ retry: true });
    await settle();
    expect(idle).toBe(true);
    loop.trigger('file');
    await timers.advance(100_000);
    expect(runs.calls).toHaveLength(1);
  });
});
