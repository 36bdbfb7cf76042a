import { defineConfig } from 'vitest/config';

/**
 * `npm run chaos`: the full chaos run (test/chaos/full) and the fast subset that `npm test`
 * also runs (test/chaos). Replay one schedule with `CHAOS_SEED=<seed> npm run chaos`.
 */
export default defineConfig({
  test: {
    include: ['test/chaos/**/*.test.ts'],
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
