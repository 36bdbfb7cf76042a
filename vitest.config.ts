import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The full chaos run and the full benchmark are separate commands (npm run chaos / bench).
    exclude: ['node_modules/**', 'dist/**', 'test/chaos/full/**', 'test/bench/full/**'],
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    testTimeout: 30_000,
    hookTimeout: 30_000,
    reporters: process.env.CI ? ['default'] : ['default'],
  },
});
