import { describe, expect, it } from 'vitest';
import { alternately, median, pairedRatio } from './alternate.js';

describe('alternately', () => {
  it('runs the two commands in turn, first then second, as many pairs as asked', async () => {
    const order: string[] = [];
    const runs = await alternately(
      3,
      async () => order.push('a') && order.length,
      async () => order.push('b') && order.length,
    );
    expect(order).toEqual(['a', 'b', 'a', 'b', 'a', 'b']);
    expect(runs).toEqual({ first: [1, 3, 5], second: [2, 4, 6] });
  });

  it('refuses a count of pairs that is not a positive integer, before running anything', async () => {
    let ran = 0;
    for (const pairs of [0, -1, 1.5, Number.NaN]) {
      await expect(alternately(pairs, async () => (ran += 1), async () => (ran += 1))).rejects.toThrow(RangeError);
    }
    expect(ran).toBe(0);
  });
});

describe('median', () => {
  it('takes the middle of an odd count and the mean of the two middle values of an even one, in any order', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
  });

  it('is NaN for no values, so a figure without runs cannot pass', () => {
    expect(median([])).toBeNaN();
  });
});

describe('a median with a missing measurement', () => {
  it('is NaN whatever the order, so one run without its figure fails the target instead of passing on the rest', () => {
    for (const values of [[Number.NaN, 1, 3], [1, 3, Number.NaN], [3, Number.NaN, 1], [9, Number.NaN, 1, 5, 3]]) expect(median(values)).toBeNaN();
  });
});

describe('pairedRatio', () => {
  it("is the median of each pair's own ratio, not the ratio of the two medians", () => {
    // turn 6's tokensDir runs: with 5.98, 6.67, 6.09 s; without 5.65, 5.53, 5.30 s
    const ratio = pairedRatio([5.98, 6.67, 6.09], [5.65, 5.53, 5.3]);
    expect(ratio).toBeCloseTo(6.09 / 5.3, 10);
    expect(ratio).not.toBeCloseTo(median([5.98, 6.67, 6.09]) / median([5.65, 5.53, 5.3]), 3);
  });

  it('refuses sides of different lengths, and is NaN when a run is missing its figure', () => {
    expect(() => pairedRatio([1, 2], [1])).toThrow(RangeError);
    expect(pairedRatio([1, 2, 3], [1, Number.NaN, 1])).toBeNaN();
  });
});
