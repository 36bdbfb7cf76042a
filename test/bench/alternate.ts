/**
 * Two measured commands run in turn, so a busy spell of the shared machine hits both: what the
 * ratios between two runs' times stand on (cold start, `amsync plan` beside the bare listing,
 * tokensDir). One pair alone moved by ±15 % between runs of the same code (docs/performance.md).
 */
export async function alternately<A, B>(pairs: number, first: () => Promise<A>, second: () => Promise<B>): Promise<{ readonly first: A[]; readonly second: B[] }> {
  if (!Number.isInteger(pairs) || pairs < 1) throw new RangeError(`pairs must be a positive integer, got ${pairs}`);
  const a: A[] = [];
  const b: B[] = [];
  for (let i = 0; i < pairs; i += 1) {
    a.push(await first());
    b.push(await second());
  }
  return { first: a, second: b };
}

/**
 * The middle value; of an even count, the mean of the two middle ones. NaN for none, and NaN
 * when any value is NaN (a run whose measurement is missing): a figure from such runs must
 * fail its target, not pass on the others.
 */
export function median(values: readonly number[]): number {
  if (values.length === 0 || values.some(Number.isNaN)) return Number.NaN;
  const sorted = [...values].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * The median of the pairs' own ratios, `first[i] ÷ second[i]`: each ratio within one busy or
 * quiet spell, as the alternation meant (a ratio of the two medians could set one pair's
 * numerator over another's denominator).
 */
export function pairedRatio(first: readonly number[], second: readonly number[]): number {
  if (first.length !== second.length) throw new RangeError(`pairs need as many runs on each side, got ${first.length} and ${second.length}`);
  return median(first.map((value, i) => value / second[i]!));
}
