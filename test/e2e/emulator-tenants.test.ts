import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningTenants } from '../../src/emulator/index.js';
import { resetTenants } from '../helpers/emulator-per-test.js';
import { root } from '../helpers/paths.js';
import { call, errorsOf, RO_TOKEN, RW_TOKEN } from '../helpers/emulator-client.js';
import { runInProcess } from '../helpers/in-process.js';

/**
 * `amsync emulator --tenants N` (DESIGN.md §9): many independent services on one port, each
 * under /t/<name>/ with its own state, tokens, rate limit, faults and control API.
 */

const USERS = '/api/sshusers';

let emu: RunningTenants;
let dir: string;

beforeAll(async () => {
  emu = await startEmulator({ tokens: [RW_TOKEN], readOnlyTokens: [RO_TOKEN], tenants: ['a', 'b', 'c'], seed: 99 });
});
afterAll(async () => {
  await emu.close();
});
beforeEach(async () => {
  resetTenants(emu, { tokens: [RW_TOKEN], readOnlyTokens: [RO_TOKEN] });
  dir = await mkdtemp(join(tmpdir(), 'amsync-tenants-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** One request to tenant `name`'s service: `path` is the path of the API (or control API). */
const at = (name: string, method: string, path: string, options: Parameters<typeof call>[3] = {}) => call(emu.url, method, `/t/${name}${path}`, options);
const usernames = (name: string) => emu.tenant(name).state().sshUsers.map((u) => u.username);

describe('two tenants are independent services', () => {
  it('a write in one is invisible in the other', async () => {
    const created = await at('a', 'POST', USERS, { body: { username: 'deploy', level: 'n1', password: 'pw' } });
    expect(created.status).toBe(200);
    const listA = await at('a', 'GET', `${USERS}?cursor=0`);
    const listB = await at('b', 'GET', `${USERS}?cursor=0`);
    expect((listA.json as { users: { username: string }[] }).users.map((u) => u.username)).toEqual(['deploy']);
    expect(listB.json).toMatchObject({ cursor: { current: 0, next: null, previous: null }, users: [] });
    // Ids are per service too: the first user of b is id 1 as well.
    expect((await at('b', 'POST', USERS, { body: { username: 'other', level: 'n1', password: 'pw' } })).json).toMatchObject({ id: 1, username: 'other' });
    expect(usernames('a')).toEqual(['deploy']);
    expect(usernames('b')).toEqual(['other']);
    expect(usernames('c')).toEqual([]);
  });

  it('a fault set through /t/a/_emulator/faults affects only a', async () => {
    const set = await at('a', 'PUT', '/_emulator/faults', { token: null, body: { maintenance: true } });
    expect(set.status).toBe(200);
    expect((await at('a', 'GET', USERS)).status).toBe(503);
    expect((await at('b', 'GET', USERS)).status).toBe(200);
    expect(emu.tenant('b').faults().maintenance).toBe(false);
    // A rule too, through the in-process handle.
    emu.tenant('b').setFaults({ rules: [{ method: 'POST', path: '^/api/sshusers$', status: 500 }] });
    expect((await at('b', 'POST', USERS, { body: { username: 'x', level: 'n1', password: 'pw' } })).status).toBe(500);
    expect((await at('c', 'POST', USERS, { body: { username: 'x', level: 'n1', password: 'pw' } })).status).toBe(200);
    expect(emu.tenant('b').faults().ruleStats).toEqual([{ matched: 1, fired: 1 }]);
  });

  it('each tenant has its own rate-limit bucket', async () => {
    // One token a hundred seconds: the first request takes it, the next is refused.
    for (const name of ['a', 'b']) emu.tenant(name).setFaults({ rateLimit: 0.01 });
    expect((await at('a', 'GET', USERS)).status).toBe(200);
    const refused = await at('a', 'GET', USERS);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBeDefined();
    expect((await at('b', 'GET', USERS)).status).toBe(200);
    expect((await at('c', 'GET', USERS)).status).toBe(200);
  });

  it('tokens rotate per tenant, and a token issued by one tenant is unknown to the others', async () => {
    expect((await at('a', 'PUT', '/_emulator/tokens', { token: null, body: { tokens: ['new-token'] } })).status).toBe(200);
    expect((await at('a', 'GET', USERS)).status).toBe(401);
    expect((await at('a', 'GET', USERS, { token: 'new-token' })).status).toBe(200);
    expect((await at('b', 'GET', USERS)).status).toBe(200);
    expect((await at('b', 'GET', USERS, { token: 'new-token' })).status).toBe(401);

    emu.tenant('b').addRefreshToken('ik-b');
    const exchanged = await at('b', 'POST', '/api/v1/oauth2/token', { token: null, body: { grant_type: 'refresh_token', refresh_token: 'ik-b' } });
    expect(exchanged.status).toBe(200);
    const access = (exchanged.json as { access_token: string }).access_token;
    expect((await at('b', 'GET', USERS, { token: access })).status).toBe(200);
    expect((await at('c', 'GET', USERS, { token: access })).status).toBe(401);
    expect((await at('c', 'POST', '/api/v1/oauth2/token', { token: null, body: { grant_type: 'refresh_token', refresh_token: 'ik-b' } })).status).toBe(404);
  });

  it('each tenant keeps its own request log, with the paths of its own API', async () => {
    await at('a', 'GET', `${USERS}?cursor=0`);
    await at('b', 'DELETE', `${USERS}/7`);
    expect(emu.tenant('a').requests()).toEqual([expect.objectContaining({ method: 'GET', path: USERS, query: { cursor: '0' }, status: 200 })]);
    const logB = await at('b', 'GET', '/_emulator/requests', { token: null });
    expect((logB.json as { requests: unknown[] }).requests).toEqual([expect.objectContaining({ method: 'DELETE', path: `${USERS}/7`, status: 404 })]);
    expect(emu.tenant('c').requests()).toEqual([]);
  });
});

describe('routing', () => {
  it('an unknown tenant answers 404 in the API\'s error shape', async () => {
    for (const path of ['/t/zz/api/sshusers', '/t/zz/_emulator/state', '/t/A/api/sshusers', '/t/', '/t']) {
      const res = await call(emu.url, 'GET', path);
      expect(res.status, path).toBe(404);
      expect(res.headers['content-type']).toBe('application/json');
      expect(errorsOf(res)).toEqual([{ field: 'path', type: 'not_found', msg: expect.stringContaining('this emulator serves 3 tenant(s) (a, b, c) under /t/<name>/') }]);
    }
  });

  it('un-prefixed paths answer 404, the control API included', async () => {
    for (const [method, path] of [
      ['GET', '/api/sshusers'],
      ['POST', '/api/sshusers'],
      ['GET', '/_emulator/state'],
      ['GET', '/'],
    ] as const) {
      const res = await call(emu.url, method, path, method === 'POST' ? { body: { username: 'u', level: 'n1', password: 'pw' } } : {});
      expect(res.status, path).toBe(404);
      expect(errorsOf(res)[0]).toMatchObject({ field: 'path', type: 'not_found', msg: expect.stringContaining(`no API at ${path}`) });
    }
    expect(emu.tenantNames.flatMap(usernames)).toEqual([]);
  });

  it('a tenant\'s root, and a query right after its name, reach its own API', async () => {
    expect((await call(emu.url, 'GET', '/t/a')).status).toBe(404);
    expect(errorsOf(await call(emu.url, 'GET', '/t/a?cursor=0'))[0]?.msg).toBe('no API at /t/a/');
    expect((await call(emu.url, 'GET', '/t/a/api/sshusers/?cursor=0')).status).toBe(200);
  });

  it('a tenant\'s state is built on its first request, not before', async () => {
    const lazy = await startEmulator({ tokens: [RW_TOKEN], tenants: 500 });
    try {
      expect(lazy.tenantNames).toHaveLength(500);
      expect(lazy.tenantNames.slice(0, 2)).toEqual(['t1', 't2']);
      expect(lazy.tenantNames.at(-1)).toBe('t500');
      expect(lazy.activeTenants()).toBe(0);
      expect((await call(lazy.url, 'GET', '/t/t250/api/sshusers')).status).toBe(200);
      expect((await call(lazy.url, 'GET', '/t/t501/api/sshusers')).status).toBe(404);
      expect(lazy.activeTenants()).toBe(1);
      expect(lazy.tenant('t7').url).toBe(`${lazy.url}/t/t7`);
      expect(lazy.activeTenants()).toBe(2);
    } finally {
      await lazy.close();
    }
  });
});

describe('what the emulator shows a client carries the tenant prefix', () => {
  /** Every path-like text in an answer (`/api/…`, `/_emulator/…`, `/t/…`). */
  const pathsIn = (text: string) => text.match(/\/(?:t\/[a-z0-9-]+\/)?(?:api|_emulator)\/[\w/.-]*/g) ?? [];

  it('error messages name the path the client sent, prefix included', async () => {
    // Tenant a has no integrator key (b got one above): its token endpoint answers 404.
    await at('a', 'POST', USERS, { body: { username: 'deploy', level: 'n1', password: 'pw' } });
    const answers = [
      await at('a', 'GET', '/api/nowhere'),
      await at('a', 'DELETE', USERS),
      await at('a', 'DELETE', `${USERS}/1`, { token: RO_TOKEN }),
      await at('a', 'POST', '/api/v1/oauth2/token', { token: null, body: {} }),
      await at('a', 'GET', '/_emulator/nowhere', { token: null }),
      await at('a', 'DELETE', '/_emulator/state', { token: null }),
    ];
    expect(answers.map((r) => r.status)).toEqual([404, 405, 403, 404, 404, 405]);
    const paths = answers.flatMap((r) => errorsOf(r).flatMap((e) => pathsIn(e.msg)));
    expect(paths).toEqual(['/t/a/api/nowhere', '/t/a/api/sshusers', '/t/a/api/sshusers/1', '/t/a/api/v1/oauth2/token', '/t/a/_emulator/nowhere', '/t/a/_emulator/state']);
  });

  it('the echo fault quotes the path as sent; the rule matched the tenant\'s own path', async () => {
    emu.tenant('c').setFaults({ rules: [{ method: 'POST', path: '^/api/sshusers$', status: 400, echo: 'json' }] });
    const res = await at('c', 'POST', USERS, { body: { username: 'x', level: 'n1', password: 'pw' } });
    expect(res.status).toBe(400);
    expect(errorsOf(res)[0]?.msg).toMatch(/^POST \/t\/c\/api\/sshusers failed/);
  });

  it('cursors are opaque integers, not URLs: a client follows every page under the prefix', async () => {
    emu.tenant('a').seed({ count: { sshUsers: 23 } });
    const seen: number[] = [];
    let cursor: number | null = 0;
    while (cursor !== null) {
      const page = (await at('a', 'GET', `${USERS}?cursor=${cursor}&size=5`)).json as { cursor: { next: number | null }; users: { id: number }[] };
      expect(typeof page.cursor.next === 'number' || page.cursor.next === null).toBe(true);
      seen.push(...page.users.map((u) => u.id));
      cursor = page.cursor.next;
    }
    expect(seen).toHaveLength(23);
  });
});

describe('amsync against one tenant', () => {
  it('syncs examples/access.yaml against http://127.0.0.1:PORT/t/b; a second plan is a no-op; other tenants see nothing', async () => {
    emu.tenant('b').seed({ count: { sshUsers: 12 } });
    const url = emu.tenant('b').url;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/t\/b$/);
    const env = { AMSYNC_URL: url, AMSYNC_TOKEN: RW_TOKEN, DEPLOY_PASSWORD: 'deploy-pw-3f1c' };
    const args = ['-f', join(root, 'examples', 'access.yaml'), '--state-file', join(dir, 'state.json'), '--page-size', '5'];
    const sync = await runInProcess(['sync', ...args], { cwd: dir, env });
    expect(sync.stderr).not.toMatch(/error/i);
    expect(sync.code).toBe(0);
    expect(usernames('b')).toEqual(expect.arrayContaining(['deploy', 'alice', 'backup', 'monitoring']));
    expect(emu.tenant('b').state().apikeys.map((k) => k.name).sort()).toEqual(['billing-integration', 'grafana-readonly', 'incident-bot', 'platform-admin']);
    // The listing followed every page of 5 of the 12 users, and the role name was looked up: under /t/b.
    const reads = emu.tenant('b').requests().filter((r) => r.method === 'GET');
    const cursors = reads.filter((r) => r.path === USERS).map((r) => r.query.cursor);
    expect(cursors).toHaveLength(3);
    expect(cursors[0]).toBe('0');
    expect(reads.some((r) => r.path === '/api/roles')).toBe(true);

    emu.tenant('b').clearRequests();
    const plan = await runInProcess(['plan', '--detailed-exitcode', ...args], { cwd: dir, env });
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain('No changes. The service matches the desired state (9 unchanged, 12 unmanaged).');
    expect(emu.tenant('b').requests().filter((r) => r.method !== 'GET')).toEqual([]);
    for (const other of ['a', 'c']) {
      expect(emu.tenant(other).requests()).toEqual([]);
      expect(emu.tenant(other).state()).toMatchObject({ sshUsers: [], apikeys: [] });
    }
  });
});

describe('the programmatic API', () => {
  it('tenant() refuses a name the emulator does not serve; bad tenants options are refused before listening', async () => {
    expect(() => emu.tenant('zz')).toThrow(expect.objectContaining({ code: 'emulator_options', message: expect.stringContaining("'zz'") }));
    for (const tenants of [0, 10_001, 1.5, [], ['Upper'], ['-dash'], ['a', 'a'], ['x'.repeat(64)]]) {
      await expect(startEmulator({ tokens: ['t'], tenants }), JSON.stringify(tenants)).rejects.toMatchObject({ code: 'emulator_options', message: expect.stringMatching(/^Expected `tenants/) });
    }
  });

  it('with a data file, every tenant starts from it and nothing is written back', async () => {
    const data = join(dir, 'state.json');
    const single = await startEmulator({ tokens: [RW_TOKEN], dataFile: data });
    single.seed({ sshUsers: [{ username: 'seeded', password: 'pw' }], apikeys: [{ name: 'seeded-key' }] });
    await single.close();
    const before = await readFile(data, 'utf8');

    const fleet = await startEmulator({ tokens: [RW_TOKEN], dataFile: data, tenants: 2 });
    try {
      for (const name of fleet.tenantNames) expect(fleet.tenant(name).state().sshUsers.map((u) => u.username)).toEqual(['seeded']);
      expect((await call(fleet.url, 'POST', '/t/t1/api/sshusers', { body: { username: 'only-t1', level: 'n1', password: 'pw' } })).status).toBe(200);
      expect(fleet.tenant('t1').state().sshUsers.map((u) => u.username)).toEqual(['seeded', 'only-t1']);
      expect(fleet.tenant('t2').state().sshUsers.map((u) => u.username)).toEqual(['seeded']);
      const check = await call(fleet.url, 'POST', '/t/t2/_emulator/check-password', { token: null, body: { username: 'seeded', password: 'pw' } });
      expect(check.json).toEqual({ match: true });
    } finally {
      await fleet.close();
    }
    expect(await readFile(data, 'utf8')).toBe(before);
  });
});

describe('amsync emulator flags for tenants', () => {
  it('bad --tenants and --tenant values exit 64 with a message naming the flag, before listening', async () => {
    const cases: [string[], RegExp][] = [
      [['--tenants', '0'], /Expected `--tenants` to be an integer from 1 to 10000, got '0'/],
      [['--tenants', '10001'], /Expected `--tenants` to be an integer from 1 to 10000, got '10001'/],
      [['--tenants', 'many'], /Expected `--tenants` to be an integer from 1 to 10000, got 'many'/],
      [['--tenant', 'Bad_Name'], /Expected `--tenant` to be a name of a-z, 0-9 and - .*, got 'Bad_Name'/],
      [['--tenant', '-a'], /Expected `--tenant` .*, got '-a'/],
      [['--tenant', 'a', '--tenant', 'a'], /Expected each `--tenant` name once, got 'a' twice/],
      [['--tenants', '2', '--tenant', 'a'], /Expected either `--tenants N` or `--tenant NAME`/],
    ];
    for (const [flags, message] of cases) {
      const run = await runInProcess(['emulator', '--port', '0', '--token', 't', ...flags], { cwd: dir });
      expect(run.code, flags.join(' ')).toBe(64);
      expect(run.stderr).toMatch(message);
      expect(run.stdout).toBe('');
    }
  });

  it('amsync emulator --help documents the flags with an example', async () => {
    const help = await runInProcess(['emulator', '--help']);
    expect(help.code).toBe(0);
    const text = help.stdout.replace(/\s+/g, ' ');
    expect(text).toMatch(/--tenants <N>/);
    expect(text).toMatch(/--tenant <NAME>/);
    expect(text).toContain('un-prefixed paths then answer 404');
    expect(text).toContain('amsync plan --url http://127.0.0.1:8080/t/t2');
  });
});
