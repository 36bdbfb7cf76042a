/** How a measured cost grows with the fleet's size (issue 32): a line through the points, and how far from one. */

/** The least-squares line through the points: its slope (per target) and intercept. */
export function linearFit(points: readonly (readonly [number, number])[]): { slope: number; intercept: number } {
  const n = points.length;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  const sxx = points.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  const slope = sxx === 0 ? Number.NaN : points.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0) / sxx;
  return { slope, intercept: my - slope * mx };
}

/**
 * How far from a line: the cost of each step's added targets ÷ the first step's, the largest
 * of them (1 when every added target costs what the first ones did; 2 when the last step's cost
 * twice as much each, as a cost growing with the fleet's size would).
 */
export function marginalRatio(points: readonly (readonly [number, number])[]): number {
  const steps = points.slice(1).map(([x, y], i) => (y - points[i]![1]) / (x - points[i]![0]));
  if (steps.length < 2) return Number.NaN;
  return Math.max(...steps.slice(1).map((s) => s / steps[0]!));
}
