import { afterAll, beforeAll, vi } from 'vitest';

/**
 * Run before every test file (vitest.config.ts: setupFiles). Files share their worker
 * process (isolate: false), so each must leave it as it found it; this fails the file that
 * does not, and puts things back so that the files after it are not hurt:
 * - process.env: a variable set or removed and not restored;
 * - the working directory;
 * - ordinary words left registered as known secrets (then `[redacted]` turns up in the output
 *   of unrelated files): see forgetKnownSecretsAfterThisFile() in shared-process.ts.
 * Its afterAll runs after the file's own (hooks run in stack order).
 */

/** Words amsync writes and tests expect to read, which no test's secret should be. */
const ordinaryText = 'the last run: another second, 4242 seconds; null or true; apply, plan, sync, call for deploy; a literal';

let env: Record<string, string | undefined> = {};
let cwd = '';

beforeAll(() => {
  env = { ...process.env };
  cwd = process.cwd();
});

afterAll(async () => {
  const problems: string[] = [];
  const changed = [...new Set([...Object.keys(env), ...Object.keys(process.env)])].filter((k) => env[k] !== process.env[k]);
  if (changed.length > 0) {
    problems.push(`it changed process.env (${changed.join(', ')}) and did not restore it`);
    for (const k of changed) {
      if (env[k] === undefined) delete process.env[k];
      else process.env[k] = env[k];
    }
  }
  if (process.cwd() !== cwd) {
    problems.push(`it left the working directory at ${process.cwd()}`);
    process.chdir(cwd);
  }
  // Imported here, not at the top: after a file's vi.resetModules() this is the fresh module.
  const { scrub } = await import('../../src/secrets/known-secrets.js');
  const scrubbed = scrub(ordinaryText);
  if (scrubbed !== ordinaryText) {
    problems.push(`it left ordinary words registered as known secrets ("${scrubbed}"): call forgetKnownSecretsAfterThisFile() (test/helpers/shared-process.ts)`);
    vi.resetModules();
  }
  if (problems.length > 0) throw new Error(`This test file leaks into the files run after it in the same process: ${problems.join('; ')}`);
});
