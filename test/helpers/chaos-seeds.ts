/**
 * Which seeds each chaos file runs, in one place, so that `CHAOS_SEED=<seed> npm run chaos`
 * replays a seed in the file that owns it (and only there). A seed no file owns is replayed
 * as a CLI schedule.
 */

const range = (start: number, count: number): number[] => Array.from({ length: count }, (_, i) => start + i);

export const chaosSeedSets = {
  /**
   * Inside `npm test`: six CLI schedules in which all thirteen fault families fire (a cursor
   * loop or a malformed page ends a run early, so each has a schedule of its own).
   */
  'fast-cli': [20, 4, 8, 44, 471, 6],
  /** Inside `npm test`: one daemon schedule (token expiry with a rotated token file, drift). */
  'fast-daemon': [63],
  /** `npm run chaos`: 210 CLI schedules in two files (so both workers run schedules). */
  'full-cli-1': range(1000, 105),
  'full-cli-2': range(1105, 105),
  /** `npm run chaos`: daemon schedules (every family comes up as the seed cycles). */
  'full-daemon': range(2000, 13),
} as const;

export type ChaosSeedSet = keyof typeof chaosSeedSets;

/** The seeds a file runs: its own, or only CHAOS_SEED when it is set (and this file owns it). */
export function seedsFor(set: ChaosSeedSet, env: Readonly<Record<string, string | undefined>> = process.env): number[] {
  const own: readonly number[] = chaosSeedSets[set];
  const replay = env.CHAOS_SEED;
  if (replay === undefined || replay === '') return [...own];
  const seed = Number(replay);
  if (!Number.isSafeInteger(seed) || seed < 0) throw new Error(`CHAOS_SEED must be a whole number from 0 upwards, got '${replay}'`);
  const owned = Object.values(chaosSeedSets).some((seeds: readonly number[]) => seeds.includes(seed));
  return own.includes(seed) || (!owned && set === 'full-cli-1') ? [seed] : [];
}
