import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { root, spawnCollect } from '../../helpers/spawn.js';

/**
 * The suite's files share their worker process (vitest.config.ts: isolate: false). A test
 * file written elsewhere and dropped into test/ must pass here as it would in a process of
 * its own, and must not hurt the files after it, whatever it leaves behind: variables set in
 * process.env, the working directory moved, ordinary words registered as known secrets.
 * Two such files, each checking the process is clean when it starts and then leaving it
 * dirty, in one worker with this project's config: whichever runs second checks the first.
 */

const dir = join(root, 'test', `harness-${process.pid}`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const leakyFile = (word: string): string => `import { expect, it } from 'vitest';
import { Secret } from '../../src/secrets/index.js';
import { scrub } from '../../src/secrets/known-secrets.js';

it('starts clean, then leaves the process dirty', () => {
  expect(process.env.AMSYNC_HARNESS_LEAK).toBeUndefined();
  expect(process.cwd()).toBe(${JSON.stringify(root.replace(/[\\/]$/, ''))});
  expect(scrub('deploy billing monitor sync')).toBe('deploy billing monitor sync');
  new Secret('${word}');
  process.env.AMSYNC_HARNESS_LEAK = '${word}';
  process.chdir(${JSON.stringify(dir)});
});
`;

describe('a test file that leaves the process changed does not hurt the files after it', () => {
  it('two leaky files in one worker both pass, and the leaks are reported as restored', async () => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'first.test.ts'), leakyFile('deploy'));
    writeFileSync(join(dir, 'second.test.ts'), leakyFile('billing'));
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', CI: 'true', NO_COLOR: '1' };
    const run = await spawnCollect(process.execPath, [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', dir, '--poolOptions.forks.singleFork'], { cwd: root, env });
    expect(run.stdout + run.stderr).toMatch(/Tests\s+2 passed/);
    expect(run.code).toBe(0);
    expect(run.stderr.match(/restored for the files after it/g)).toHaveLength(2);
  });
});
