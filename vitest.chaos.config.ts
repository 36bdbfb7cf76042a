import { defineConfig } from 'vitest/config';

/**
 * `npm run chaos`: the full chaos run (test/chaos/full/). Its fast subset (test/chaos/*.test.ts)
 * runs in the slow project (`npm run test:slow`), before it in .ci/run. Replay one schedule
 * with `CHAOS_SEED=<seed> npm run chaos`.
 */
export default defineConfig({
  test: {
    // A replayed seed may belong to the subset: then the subset's files run too (each runs only
    // the seeds it owns, see test/chaos/helpers/seeds.ts).
    include: process.env.CHAOS_SEED ? ['test/chaos/**/*.test.ts'] : ['test/chaos/full/**/*.test.ts'],
    exclude: ['node_modules/**', 'dist/**'],
    globalSetup: ['test/chaos/global-setup.ts'],
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    // Concurrent bad-input cases at a time; schedules bring their own bounded pool.
    maxConcurrency: 4,
    testTimeout: 120_000,
    hookTimeout: 1_200_000,
  },
});
