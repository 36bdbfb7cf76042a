import { defineConfig } from 'vitest/config';

/**
 * `npm run test:slow`, the vitest project `slow`: what is slow by nature and `npm test` leaves
 * out — the install of the packed tarball as the CI examples do it (test/slow/), the small
 * benchmark (every scenario once, counted, never timed), the 200,000-key YAML file, what runs outside tools (promtool on the shipped PromQL,
 * Chromium, kubectl and the CI examples' shell) and the chaos subset (test/chaos/*.test.ts:
 * seeded fault schedules, the bad-input corpus, the emulator fuzz). `.ci/run` runs it after
 * `npm test` and before the full chaos run (`npm run chaos`, test/chaos/full/).
 */
export default defineConfig({
  test: {
    name: 'slow',
    include: ['test/slow/**/*.test.ts', 'test/bench/bench-small.test.ts', 'test/chaos/*.test.ts'],
    exclude: ['node_modules/**', 'dist/**'],
    setupFiles: ['test/helpers/setup-shared-process.ts'],
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    maxConcurrency: 4,
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});
