import { describe, expect, it } from 'vitest';
import { RttEstimator } from '../../../src/api/rtt-estimator.js';

/** Deterministic uniform numbers in [0, 1). */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

describe('round-trip times', () => {
  it('smooths the mean and the deviation as TCP does; `high` covers the jitter', () => {
    const rtt = new RttEstimator();
    expect(rtt.high).toBeUndefined();
    const random = lcg(1);
    for (let i = 0; i < 500; i += 1) rtt.add(50 + 50 * random(), i * 5);
    expect(rtt.smoothed).toBeGreaterThan(65);
    expect(rtt.smoothed).toBeLessThan(85);
    expect(rtt.high).toBeGreaterThan(rtt.smoothed! + 10);
  });

  it('jitter alone, however wide, is not a queue', () => {
    const rtt = new RttEstimator();
    const random = lcg(7);
    // The emulator's latency: uniform between 0.5 L and 1.5 L.
    for (let i = 0; i < 20_000; i += 1) {
      rtt.add(20 * (0.5 + random()), i * 2);
      expect(rtt.queueing).toBe(false);
    }
  });

  it('a minimum that rises round after round is a queue; when it falls back, it is over', () => {
    const rtt = new RttEstimator();
    let t = 0;
    for (let i = 0; i < 100; i += 1, t += 2) rtt.add(20, t);
    expect(rtt.queueing).toBe(false);
    for (let i = 0; i < 400 && !rtt.queueing; i += 1, t += 2) rtt.add(20 + i, t);
    expect(rtt.queueing).toBe(true);
    for (let i = 0; i < 100; i += 1, t += 2) rtt.add(20, t);
    expect(rtt.queueing).toBe(false);
  });
});
