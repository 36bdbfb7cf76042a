import { describe, expect, it } from 'vitest';
import { eventLoopBusy } from '../../../src/api/loop-load.js';

describe('eventLoopBusy', () => {
  it('is not busy before a window has passed, and busy after the loop was held for a whole window', () => {
    const busy = eventLoopBusy(0.9, 50);
    expect(busy()).toBe(false);
    // Hold the loop: 80 ms of synchronous work, no idle time in between.
    const until = performance.now() + 80;
    while (performance.now() < until);
    expect(busy()).toBe(true);
  });

  it('is not busy again after a window of idle time', async () => {
    const busy = eventLoopBusy(0.9, 50);
    busy();
    const until = performance.now() + 80;
    while (performance.now() < until);
    expect(busy()).toBe(true);
    // Idle: waiting in the event loop counts as idle time, however busy the machine is.
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(busy()).toBe(false);
  });

  it("the first window starts at the first question, not when it was made", () => {
    const busy = eventLoopBusy(0.9, 50);
    const until = performance.now() + 80;
    while (performance.now() < until);
    expect(busy()).toBe(false);
  });
});
