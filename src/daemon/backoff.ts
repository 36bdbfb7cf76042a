export interface BackoffOptions {
  /** Delay before the first retry of a failed run. @default 5000 */
  readonly baseMs: number;
  /** Longest delay; a schedule or a file change usually comes first. @default 300000 */
  readonly maxMs: number;
}

export const defaultBackoff: BackoffOptions = { baseMs: 5_000, maxMs: 300_000 };

/**
 * Delay before retrying after `failures` failed runs in a row (1 for the first): exponential,
 * capped, with "equal jitter" (half fixed, half random) so a fleet of sidecars that failed
 * together does not retry together, yet never retries sooner than half the step. Pure.
 */
export function retryDelay(failures: number, options: BackoffOptions, random: () => number): number {
  const n = Math.max(1, Math.floor(failures));
  // 2 ** 30 already exceeds any sane cap; bounding the exponent keeps the number finite.
  const step = Math.min(options.maxMs, options.baseMs * 2 ** Math.min(n - 1, 30));
  const drawn = random();
  const r = Number.isFinite(drawn) ? Math.min(1, Math.max(0, drawn)) : 1;
  return Math.round(step / 2 + (step / 2) * r);
}
