import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The full chaos run and the full benchmark are separate commands (npm run chaos / bench).
    exclude: ['node_modules/**', 'dist/**', 'test/chaos/full/**', 'test/bench/full/**'],
    pool: 'forks',
    // Files share their worker process: no new process and environment per file halves the
    // run. After each file, test/helpers/setup-shared-process.ts puts back what it changed
    // (process.env, the working directory) and drops the module graph, so the next file starts
    // as in a process of its own (no known secret, no module state carried over). Not
    // threads: in-process runs chdir.
    // Three workers on two cores: the longest files mostly wait on child processes and
    // sockets, and a third worker fills that time. As many at least as at most: a worker
    // retired while idle can take a task with it ("Terminating worker thread").
    poolOptions: { forks: { maxForks: 3, minForks: 3, isolate: false } },
    setupFiles: ['test/helpers/setup-shared-process.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    reporters: process.env.CI ? ['default'] : ['default'],
  },
});
