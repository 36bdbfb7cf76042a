import { describe, expect, it } from 'vitest';
import { linearFit, marginalRatio } from './growth.js';

describe('the fleet growth figures', () => {
  it('finds the slope and fixed part of a line', () => {
    const fit = linearFit([
      [100, 300 + 5 * 100],
      [500, 300 + 5 * 500],
      [2000, 300 + 5 * 2000],
    ]);
    expect(fit.slope).toBeCloseTo(5, 9);
    expect(fit.intercept).toBeCloseTo(300, 6);
  });

  it('reads 1 for a line and more for a cost that grows with the size', () => {
    const line: [number, number][] = [100, 500, 1000, 2000].map((n) => [n, 300 + 5 * n]);
    expect(marginalRatio(line)).toBeCloseTo(1, 9);
    // Each target costs 5 ms plus 0.005 ms per target already there: quadratic.
    const quadratic: [number, number][] = [100, 500, 1000, 2000].map((n) => [n, 5 * n + 0.0025 * n * n]);
    expect(marginalRatio(quadratic)).toBeGreaterThan(1.5);
  });

  it('has no ratio for fewer than three sizes', () => {
    expect(marginalRatio([[1, 1], [2, 2]])).toBeNaN();
  });
});
