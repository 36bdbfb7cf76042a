/**
 * Which seeds each chaos file runs, in one place, so that `CHAOS_SEED=<seed> npm run chaos`
 * replays a seed in the file that owns it (and only there). A seed no file owns is replayed
 * as a CLI schedule.
 */

const range = (start: number, count: number): number[] => Array.from({ length: count }, (_, i) => start + i);

export const chaosSeedSets = {
  /**
   * In the slow project (`npm run test:slow`): ten CLI schedules in which all twenty fault families fire (a cursor
   * loop, a malformed page, a page that fails for good or a body without end ends a run before
   * its writes, so each has a schedule of its own; a kill, an interrupt and two writers cannot
   * share one). Chosen among those that do so quickly: storms here answer `Retry-After: 0`
   * (the seconds and date forms, which cost real seconds in a child process, are in the full
   * run and in test/e2e/client-vs-emulator.test.ts); only the maintenance window (201) waits.
   * The longest go first.
   */
  'fast-cli': [201, 90, 159, 174, 505, 9, 18, 24, 7, 6],
  /**
   * In the slow project: one CLI schedule per fault of issue 27 (a paused writer, Ctrl-C with a
   * deep queue, a by-id 404, short access tokens, a key on a read-only folder), longest first.
   */
  'fast-issue-27': [3006, 3003, 3002],
  /** In the slow project: one daemon schedule (a CLI sync beside the daemon, echoed secrets, resets). */
  'fast-daemon': [63],
  /** `npm run chaos`: 300 CLI schedules in two files (so both workers run schedules). */
  'full-cli-1': range(1000, 150),
  'full-cli-2': range(1150, 150),
  /**
   * `npm run chaos`: the faults of issue 27 (a paused writer, a by-id 404 while listed, a
   * rotating integrator key on a read-only file, access tokens shorter than the queue's wait,
   * Ctrl-C with a deep queue), each the primary of one seed in five, with extras mixed in.
   */
  'full-issue-27': range(3000, 100),
  /**
   * `npm run chaos`: daemon schedules, one per fault family as the primary (the seed cycles
   * them); 2039 for interrupt, as 2019 mixes in a page that fails for good (no write to cut).
   */
  'full-daemon': [...range(2000, 19), 2039],
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
