import { describe, expect, it } from 'vitest';
import { alternately, median } from './alternate.js';

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
