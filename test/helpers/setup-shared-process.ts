import { afterAll, beforeAll, vi } from 'vitest';

/**
 * Run before every test file (vitest.config.ts: setupFiles). Files share their worker
 * process (isolate: false) for speed, so each file's leftovers are put back here before the
 * next file runs, as a process of its own would have them:
 * - process.env: a variable set or removed and not restored is restored;
 * - the working directory is restored;
 * - fake timers, spies and stubbed globals or variables (vi.*) are undone;
 * - the module graph is dropped (vi.resetModules): the next file imports amsync afresh, so
 *   nothing module-level carries over — above all the process-wide known secrets
 *   (src/secrets/known-secrets.ts), which would otherwise turn a word one file registered
 *   into `[redacted]` in another file's output. Transforms stay cached: what a file pays
 *   again is evaluating the modules it imports, not a new process.
 * A file's leftovers are repaired, not failed: a test file written elsewhere (that mutates
 * process.env, say) must pass here as it would in isolation. They are reported on stderr, so
 * this suite's own files can be kept clean. What cannot be put back from here (nock, loaded
 * once per process) is why a file that imports nock itself runs in a process of its own
 * (vitest.config.ts).
 * Its afterAll runs after the file's own (hooks run in stack order).
 */

let env: Record<string, string | undefined> = {};
let cwd = '';

beforeAll(() => {
  env = { ...process.env };
  cwd = process.cwd();
});

afterAll(() => {
  const repaired: string[] = [];
  const changed = [...new Set([...Object.keys(env), ...Object.keys(process.env)])].filter((k) => env[k] !== process.env[k]);
  if (changed.length > 0) {
    repaired.push(`process.env (${changed.join(', ')})`);
    for (const k of changed) {
      if (env[k] === undefined) delete process.env[k];
      else process.env[k] = env[k];
    }
  }
  if (process.cwd() !== cwd) {
    repaired.push(`the working directory (${process.cwd()})`);
    process.chdir(cwd);
  }
  vi.useRealTimers();
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  vi.unstubAllGlobals();
  vi.resetModules();
  if (repaired.length > 0) process.stderr.write(`test file left ${repaired.join(' and ')} changed; restored for the files after it\n`);
});
