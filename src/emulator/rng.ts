/**
 * A small seeded generator (mulberry32) for every random choice of the faults: jitter,
 * fail-rate draws, rule probabilities. The same seed and the same request order give the
 * same faults, so a chaos run can be replayed.
 */
export type Rng = () => number;

export function createRng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
