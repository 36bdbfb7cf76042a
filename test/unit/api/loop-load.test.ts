import { describe, expect, it } from 'vitest';
import { eventLoopBusy, type LoopReading } from '../../../src/api/loop-load.js';

describe('eventLoopBusy', () => {
  it('is not busy before a window has passed, and busy after the loop was held for a whole window', () => {
    const busy = eventLoopBusy(0.9, 50);
    expect(busy()).toBe(false);
    // Hold the loop: 80 ms of synchronous work, no idle time in between.
    const until = performance.now() + 80;
    while (performance.now() < until);
    expect(busy()).toBe(true);
  });

  it('is not busy again after a window of idle time (readings given: a real idle wait is a race against the machine)', () => {
    // Cumulative readings as node gives them: idle and active ms since the loop started.
    let now = { idle: 0, active: 0 };
    const read: LoopReading = (current, last) => {
      if (current === undefined) return { ...now, utilization: now.active / Math.max(1, now.idle + now.active) };
      const idle = current.idle - (last?.idle ?? 0);
      const active = current.active - (last?.active ?? 0);
      return { idle, active, utilization: active / Math.max(1, idle + active) };
    };
    const busy = eventLoopBusy(0.9, 50, read);
    busy();
    now = { idle: 0, active: 80 }; // the loop held for 80 ms
    expect(busy()).toBe(true);
    now = { idle: 30, active: 85 }; // less than a window since: the verdict stands
    expect(busy()).toBe(true);
    now = { idle: 110, active: 90 }; // a window, nearly all of it waiting
    expect(busy()).toBe(false);
  });

  it("the first window starts at the first question, not when it was made", () => {
    const busy = eventLoopBusy(0.9, 50);
    const until = performance.now() + 80;
    while (performance.now() < until);
    expect(busy()).toBe(false);
  });
});
