import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defaultFaultSettings, startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { runInProcess } from '../helpers/in-process.js';

/**
 * The scope preflight (DESIGN.md §1): where GET /api/user/info answers, a token that may not
 * write a kind the plan changes fails at once, in one line, before the first write; where it
 * does not answer, nothing changes.
 */

const RO = 'read-only-token';
const RW = 'read-write-token';
let dir: string;
let emu: RunningEmulator;
let access: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-preflight-'));
  emu = await startEmulator({ tokens: [RW], readOnlyTokens: [RO] });
  access = join(dir, 'access.yaml');
  await writeFile(access, 'sshUsers:\n  - username: a\n    password: p1\n  - username: b\n    password: p2\napikeys:\n  - name: k\n');
});

afterEach(() => {
  emu.setFaults({ ...defaultFaultSettings, rules: [] });
  emu.reset();
  emu.clearRequests();
});

afterAll(async () => {
  await emu.close();
  await rm(dir, { recursive: true, force: true });
});

const sync = (token: string, extra: string[] = []) =>
  runInProcess(['sync', '-f', access, ...extra], { env: { AMSYNC_URL: emu.url, AMSYNC_TOKEN: token, AMSYNC_STATE_FILE: join(dir, 'state.json') }, cwd: dir });
const writes = () => emu.requests().filter((r) => r.method !== 'GET');

describe('scope preflight', () => {
  it('a read-only token fails at once with one line, before any write (exit 1)', async () => {
    const run = await sync(RO);
    expect(run.code).toBe(1);
    const errors = run.stderr.split('\n').filter((l) => l.startsWith('error:'));
    expect(errors).toEqual(['error: the token may not change SSH users or apikeys: GET /api/user/info gives it no write scope for them (a read-only token?); nothing was changed. Give the integration a role that may write SSH users or apikeys']);
    expect(writes()).toEqual([]);
    expect(emu.requests().filter((r) => r.path === '/api/user/info')).toHaveLength(1);
  });

  it('where /api/user/info does not answer (404), nothing changes: the writes go ahead and fail one by one (403)', async () => {
    emu.setFaults({ rules: [{ path: '^/api/user/info$', status: 404 }] });
    const run = await sync(RO);
    expect(run.code).toBe(1);
    expect(writes().map((r) => r.status)).toEqual([403, 403, 403]);
  });

  it('a dry-run asks nothing; a token that may write passes', async () => {
    expect((await sync(RO, ['--dry-run'])).code).toBe(0);
    expect(emu.requests().filter((r) => r.path === '/api/user/info')).toEqual([]);
    expect((await sync(RW)).code).toBe(0);
    expect(writes()).toHaveLength(3);
  });
});
