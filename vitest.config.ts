import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The full chaos run and the full benchmark are separate commands (npm run chaos / bench).
    exclude: ['node_modules/**', 'dist/**', 'test/chaos/full/**', 'test/bench/full/**'],
    pool: 'forks',
    // Files share their worker and its module graph: importing amsync once per worker, not
    // once per file, halves the run. Each file leaves the process as it found it
    // (test/helpers/setup-shared-process.ts checks).
    poolOptions: { forks: { maxForks: 2, minForks: 1, isolate: false } },
    setupFiles: ['test/helpers/setup-shared-process.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    reporters: process.env.CI ? ['default'] : ['default'],
  },
});
