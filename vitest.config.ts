import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const root = fileURLToPath(new URL('.', import.meta.url));

/**
 * The test tree mirrors src/ (README, "Development"):
 * - unit: test/unit/<folder>/ for each src/<folder>/, plus test/project/ (docs, workflows,
 *   examples, the lint rules and this harness) and the bench helpers' own tests;
 * - e2e: the real CLI and daemon against the emulator over 127.0.0.1 (test/e2e/);
 * - slow (vitest.slow.config.ts: install, small benchmark, chaos subset) and the full chaos
 *   run (vitest.chaos.config.ts) are separate commands that .ci/run runs after `npm test`.
 * `npm test` runs unit, e2e and own-process.
 */
const unit = ['test/unit/**/*.test.ts', 'test/project/**/*.test.ts', 'test/bench/*.test.ts'];
const e2e = ['test/e2e/**/*.test.ts'];
const exclude = ['node_modules/**', 'dist/**', 'test/bench/bench-small.test.ts'];

/** Every `*.test.ts` under test/, as paths from the root. */
function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : testFiles(path);
    return entry.name.endsWith('.test.ts') ? [relative(root, path)] : [];
  });
}

/**
 * Files that import nock themselves run in a process of their own: nock is loaded once per
 * process and keeps its state (on or off, interceptors) across files, which a shared worker
 * cannot put back. This suite's HTTP tests go through test/helpers/http-mock.ts, which turns
 * nock on and off around its file; a test file written elsewhere that imports nock directly
 * gets the fresh nock it would get alone.
 */
const ownProcess = testFiles(join(root, 'test')).filter((file) => /from\s+['"]nock['"]|require\(\s*['"]nock['"]\s*\)/.test(readFileSync(join(root, file), 'utf8')));

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    reporters: ['default'],
    pool: 'forks',
    // Files share their worker process: no new process and environment per file halves the
    // run. After each file, test/helpers/setup-shared-process.ts puts back what it changed
    // (process.env, the working directory, timers, mocks) and drops the module graph, so the
    // next file starts as in a process of its own (no known secret, no module state carried
    // over). Not threads: in-process runs chdir. Three workers on two cores: the longest
    // files mostly wait on child processes and sockets, and a third worker fills that time.
    // As many at least as at most: a worker retired while idle can take a task with it
    // ("Terminating worker thread").
    poolOptions: { forks: { maxForks: 3, minForks: 3, isolate: false } },
    setupFiles: ['test/helpers/setup-shared-process.ts'],
    projects: [
      { extends: true, test: { name: 'unit', include: unit, exclude: [...exclude, ...ownProcess] } },
      { extends: true, test: { name: 'e2e', include: e2e, exclude: [...exclude, ...ownProcess] } },
      {
        extends: true,
        test: {
          name: 'own-process',
          // Nothing of this suite's own: see ownProcess above.
          include: ownProcess.length > 0 ? ownProcess : ['test/no-file-of-its-own.test.ts'],
          exclude,
          poolOptions: { forks: { isolate: true } },
        },
      },
    ],
  },
});
