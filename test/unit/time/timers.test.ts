import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { onAbort, Sleeper, type Timers } from '../../../src/time/index.js';

/** Timers that fire only when the test says so. */
function manualTimers(): Timers & { fire(): void; pending(): number } {
  const due = new Map<number, () => void>();
  let next = 0;
  return {
    now: () => 0,
    wallNow: () => 0,
    setTimeout: (callback) => {
      due.set(++next, callback);
      return next;
    },
    clearTimeout: (handle) => {
      due.delete(handle as number);
    },
    fire: () => {
      const calls = [...due.values()];
      due.clear();
      for (const call of calls) call();
    },
    pending: () => due.size,
  };
}

describe('sleeps can be cut short, all at once', () => {
  it('a sleep resolves true when its timer fires', async () => {
    const timers = manualTimers();
    const sleeper = new Sleeper(timers);
    const slept = sleeper.sleep(1000);
    timers.fire();
    await expect(slept).resolves.toBe(true);
  });

  it('an abort wakes the sleep with false and clears its timer', async () => {
    const timers = manualTimers();
    const stop = new AbortController();
    const slept = new Sleeper(timers).sleep(1000, stop.signal);
    stop.abort();
    await expect(slept).resolves.toBe(false);
    expect(timers.pending()).toBe(0);
  });

  it('close wakes every sleep with false, and later sleeps return false at once', async () => {
    const timers = manualTimers();
    const sleeper = new Sleeper(timers);
    const sleeps = [sleeper.sleep(10), sleeper.sleep(20)];
    sleeper.close();
    await expect(Promise.all(sleeps)).resolves.toEqual([false, false]);
    expect(timers.pending()).toBe(0);
    await expect(sleeper.sleep(5)).resolves.toBe(false);
  });

  it('a signal already aborted, or no time to wait, does not start a timer', async () => {
    const timers = manualTimers();
    const sleeper = new Sleeper(timers);
    await expect(sleeper.sleep(0)).resolves.toBe(true);
    await expect(sleeper.sleep(10, AbortSignal.abort())).resolves.toBe(false);
    expect(timers.pending()).toBe(0);
  });
});

describe('a deep queue waiting on one signal adds one listener to it', () => {
  it('fifty callbacks share one abort listener and run once each, in order', () => {
    const stop = new AbortController();
    const calls: number[] = [];
    const unsubscribe = Array.from({ length: 50 }, (_, i) => onAbort(stop.signal, () => calls.push(i)));
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(1);
    unsubscribe[3]!();
    stop.abort();
    expect(calls).toEqual(Array.from({ length: 50 }, (_, i) => i).filter((i) => i !== 3));
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
  });
});
