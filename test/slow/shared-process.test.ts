import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { root, spawnCollect } from '../helpers/spawn.js';

/**
 * The suite's files share their worker process (vitest.config.ts: isolate: false). A test
 * file written elsewhere and dropped into test/ must pass here as it would in a process of
 * its own, and must not hurt the files after it, whatever it leaves behind: variables set in
 * process.env, the working directory moved, ordinary words registered as known secrets.
 * Two such files, each checking the process is clean when it starts and then leaving it
 * dirty, in one worker with this project's config: whichever runs second checks the first.
 * Each case spawns a whole vitest run, which on a busy 2-core machine outlasted npm test's
 * 30 s test timeout: it lives in the slow project.
 */

const dir = join(root, 'test', 'project', `harness-${process.pid}`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const leakyFile = (word: string): string => `import { expect, it } from 'vitest';
import { Secret } from '../../../src/secrets/index.js';
import { scrub } from '../../../src/secrets/known-secrets.js';

it('starts clean, then leaves the process dirty', () => {
  expect(process.env.AMSYNC_HARNESS_LEAK).toBeUndefined();
  expect(process.cwd()).toBe(${JSON.stringify(root.replace(/[\\/]$/, ''))});
  expect(scrub('deploy billing monitor sync')).toBe('deploy billing monitor sync');
  new Secret('${word}');
  process.env.AMSYNC_HARNESS_LEAK = '${word}';
  process.chdir(${JSON.stringify(dir)});
});
`;

/** A file written elsewhere that mocks HTTP with nock itself, as its own process would let it. */
const directNockFile = `import nock from ${JSON.stringify('nock')};
import { expect, it } from 'vitest';
import { createClient } from '../../../src/api/index.js';
import { Secret } from '../../../src/secrets/index.js';

it('gets the answer of its own interceptor, whatever ran before it', async () => {
  nock('http://127.0.0.1:9').get('/api/sshusers/7').reply(200, { id: 7, username: 'x', level: 'n1' });
  const client = createClient({ url: 'http://127.0.0.1:9', token: new Secret('harness-token-1'), retry: { maxAttempts: 1 } });
  await expect(client.fetchSshUser(7)).resolves.toEqual({ id: 7, username: 'x', level: 'n1' });
  client.close();
  nock.cleanAll();
});
`;

/**
 * One of this suite's own HTTP files (test/helpers/http-mock.ts turns nock off after it).
 * Padded: vitest runs larger files first when it has no timings, so these run before the
 * direct file in the shared worker, which is the order that used to break it.
 */
const helperNockFile = `${'// padding\n'.repeat(300)}import { expect, it } from 'vitest';
import { mockClient, service, useStrictHttpMock } from '../../helpers/http-mock.js';

useStrictHttpMock();

it('answers through the strict mock', async () => {
  service().get('/api/sshusers/8').reply(200, { id: 8, username: 'y', level: 'n1' });
  const client = mockClient();
  await expect(client.fetchSshUser(8)).resolves.toMatchObject({ id: 8 });
  client.close();
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

  it("a file that imports nock itself gets a nock of its own, after this suite's HTTP files", async () => {
    mkdirSync(dir, { recursive: true });
    for (const name of ['first.test.ts', 'second.test.ts']) rmSync(join(dir, name), { force: true });
    writeFileSync(join(dir, 'a-helper.test.ts'), helperNockFile);
    writeFileSync(join(dir, 'b-helper.test.ts'), helperNockFile);
    writeFileSync(join(dir, 'c-direct.test.ts'), directNockFile);
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', CI: 'true', NO_COLOR: '1' };
    // One worker for the shared files, so the direct file would follow the helper's there.
    const run = await spawnCollect(process.execPath, [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', dir, '--poolOptions.forks.singleFork'], { cwd: root, env });
    expect(run.stdout + run.stderr).toMatch(/Tests\s+3 passed/);
    expect(run.stdout).toMatch(/\|own-process\| test\/project\/harness-\d+\/c-direct\.test\.ts/);
    expect(run.code).toBe(0);
  });
});
