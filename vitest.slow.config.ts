import { defineConfig } from 'vitest/config';

/**
 * `npm run test:slow`: the tests that are slow by nature and that `npm test` leaves out — the
 * install of the packed tarball as the CI examples do it, and the small benchmark (every
 * scenario once). `.ci/run` runs them after `npm test` and before the chaos suite.
 */
export const slowTests = ['test/e2e/install.test.ts', 'test/bench/bench-small.test.ts'];

export default defineConfig({
  test: {
    include: slowTests,
    exclude: ['node_modules/**', 'dist/**'],
    setupFiles: ['test/helpers/setup-shared-process.ts'],
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});
