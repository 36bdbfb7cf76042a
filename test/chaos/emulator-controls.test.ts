import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { faultRuleSchema, startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { call, errorsOf, listAll, RW_TOKEN } from '../helpers/emulator-client.js';

/**
 * The emulator's fault controls that the chaos tests rely on, beyond the ones of the contract
 * tests: token rotation and expiry, another client's writes between a listing and a write,
 * reordered pages, windows of faults, `next` and undelivered answers in the request log, and
 * the count of requests in flight; another client's rename, a listing that shifts between
 * pages, error bodies that echo secrets, a body without end, and the item each write acted on.
 */

const TOKEN = RW_TOKEN;
const ROTATED = 'controls-token-2';
const USERS = '/api/sshusers';
const KEYS = '/api/3rdparty/apikeys';

let emu: RunningEmulator;

beforeAll(async () => {
  emu = await startEmulator({ tokens: [TOKEN], seed: 11 });
});
afterAll(async () => {
  await emu.close();
});
beforeEach(() => {
  emu.reset();
  emu.setFaults({ rules: [], failRate: 0, maintenance: false });
  emu.setTokens({ tokens: [TOKEN], readOnlyTokens: [], expiredTokens: [] });
  emu.clearRequests();
});

describe('token rotation: a token expires mid-run and a rotated one takes over', () => {
  it('setTokens adds a token at run time, and the control API counts tokens without showing them', async () => {
    expect((await call(emu.url, 'GET', USERS, { token: ROTATED })).status).toBe(401);
    const put = await call(emu.url, 'PUT', '/_emulator/tokens', { token: null, body: { tokens: [TOKEN, ROTATED] } });
    expect(put.status).toBe(200);
    expect(put.json).toEqual({ tokens: 2, readOnlyTokens: 0, expiredTokens: 0 });
    expect(put.text).not.toContain(ROTATED);
    expect((await call(emu.url, 'GET', USERS, { token: ROTATED })).status).toBe(200);
    expect((await call(emu.url, 'PUT', '/_emulator/tokens', { token: null, body: { tokens: ['has space'] } })).status).toBe(400);
    expect(() => emu.setTokens({ tokens: [''] })).toThrow(expect.objectContaining({ code: 'emulator_options' }));
  });

  it('an expireToken rule expires the token of the request it fires on: 401 from then on, other tokens unaffected', async () => {
    emu.setTokens({ tokens: [TOKEN, ROTATED] });
    emu.setFaults({ rules: [{ label: 'expiry', after: 1, times: 1, expireToken: true }] });
    expect((await call(emu.url, 'GET', USERS)).status).toBe(200);
    const expired = await call(emu.url, 'GET', USERS);
    expect(expired.status).toBe(401);
    expect(errorsOf(expired)[0]!.msg).toMatch(/expired/);
    expect((await call(emu.url, 'GET', KEYS)).status).toBe(401);
    expect((await call(emu.url, 'GET', USERS, { token: ROTATED })).status).toBe(200);
    expect(emu.requests().map((r) => [r.status, r.fault ?? ''])).toEqual([
      [200, ''],
      [401, 'expiry'],
      [401, ''],
      [200, ''],
    ]);
  });
});

describe('another client writes between the listing and the write', () => {
  it('concurrentWrite "create" makes an SSH user create answer 409 (the other client created it first)', async () => {
    emu.setFaults({ rules: [{ method: 'POST', path: '^/api/sshusers$', times: 1, concurrentWrite: 'create' }] });
    const res = await call(emu.url, 'POST', USERS, { body: { username: 'deploy', level: 'n1', password: 'mine' } });
    expect(res.status).toBe(409);
    expect(emu.state().sshUsers.map((u) => u.username)).toEqual(['deploy']);
    const mine = await call(emu.url, 'POST', '/_emulator/check-password', { token: null, body: { username: 'deploy', password: 'mine' } });
    expect(mine.json).toEqual({ match: false });
  });

  it('concurrentWrite "delete" makes an update or a delete answer 404 (the other client deleted it first)', async () => {
    const seeded = emu.seed({ sshUsers: [{ username: 'a' }, { username: 'b' }], apikeys: [{ name: 'k' }] });
    emu.setFaults({ rules: [{ method: ['PUT', 'DELETE'], concurrentWrite: 'delete' }] });
    expect((await call(emu.url, 'PUT', `${USERS}/${seeded.sshUsers[0]!.id}`, { body: { level: 'n1' } })).status).toBe(404);
    expect((await call(emu.url, 'DELETE', `${KEYS}/${seeded.apikeys[0]!.id}`)).status).toBe(404);
    expect(emu.state().sshUsers.map((u) => u.username)).toEqual(['b']);
    expect(emu.state().apikeys).toEqual([]);
  });

  it('a concurrentWrite that does not fit the request changes nothing', async () => {
    emu.seed({ sshUsers: [{ username: 'a' }] });
    emu.setFaults({ rules: [{ concurrentWrite: 'delete' }] });
    expect((await call(emu.url, 'GET', USERS)).status).toBe(200);
    expect((await call(emu.url, 'POST', USERS, { body: '{not json' })).status).toBe(400);
    expect(emu.state().sshUsers.map((u) => u.username)).toEqual(['a']);
  });
});

describe('pages: reordered, and the log shows how listings chain', () => {
  it('reorderPage shuffles the items of a page, reproducibly for a seed, and every item is still listed once', async () => {
    emu.seed({ count: { sshUsers: 20 } });
    emu.setFaults({ rules: [{ method: 'GET', reorderPage: true }] });
    const pages = await listAll(emu.url, USERS, 'users', 10);
    const ids = pages.flatMap((p) => p.items.map((i) => i.id));
    expect([...ids].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(ids).not.toEqual([...ids].sort((a, b) => a - b));
  });

  it('logs the `next` of every list answer, so a test can tell a complete listing from a partial one', async () => {
    emu.seed({ count: { apikeys: 5 } });
    const pages = await listAll(emu.url, KEYS, 'apikeys', 2);
    expect(emu.requests().map((r) => r.next)).toEqual(pages.map((p) => p.cursor.next));
    expect(emu.requests().at(-1)!.next).toBeNull();
  });
});

describe('windows, answers nobody received, and requests in flight', () => {
  it('forMs: after its first firing a rule fires only within its window', async () => {
    let now = 0;
    const { FaultController } = await import('../../src/emulator/faults.js');
    const { createRng } = await import('../../src/emulator/rng.js');
    const faults = new FaultController({ rules: [{ status: 503, forMs: 1000, after: 1 }] }, createRng(1), () => now);
    const statuses = [0, 10, 500, 1010, 1011, 5000].map((t) => {
      now = t;
      return faults.admit('GET', USERS).answer?.status ?? 200;
    });
    expect(statuses).toEqual([200, 503, 503, 503, 200, 200]);
  });

  it('counts requests in flight, and marks an answer whose client hung up as undelivered (performed all the same)', async () => {
    emu.setFaults({ rules: [{ method: 'POST', delayMs: 300, label: 'slow' }] });
    const controller = new AbortController();
    const sent = fetch(`${emu.url}${USERS}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'late', level: 'n1', password: 'p' }),
      signal: controller.signal,
    }).catch(() => 'aborted');
    for (let i = 0; i < 100 && emu.inFlight() === 0; i += 1) await new Promise((r) => setTimeout(r, 5));
    expect(emu.inFlight()).toBe(1);
    controller.abort();
    expect(await sent).toBe('aborted');
    for (let i = 0; i < 200 && emu.inFlight() > 0; i += 1) await new Promise((r) => setTimeout(r, 10));
    expect(emu.inFlight()).toBe(0);
    expect(emu.requests()).toMatchObject([{ method: 'POST', status: 200, fault: 'slow', undelivered: true }]);
    expect(emu.state().sshUsers.map((u) => u.username)).toEqual(['late']);
    const listed = await call(emu.url, 'GET', '/_emulator/requests', { token: null });
    expect(listed.json).toMatchObject({ inFlight: 0 });
  });
});

describe('another client renames between the listing and the writes', () => {
  it('anotherClient performs its request just before the one the rule fires on, which then proceeds', async () => {
    const seeded = emu.seed({ sshUsers: [{ username: 'old-contractor' }] });
    const id = seeded.sshUsers[0]!.id;
    emu.setFaults({ rules: [{ label: 'rename', method: 'POST', times: 1, anotherClient: { method: 'PUT', path: `${USERS}/${id}`, body: { username: 'alice' } } }] });
    const created = await call(emu.url, 'POST', USERS, { body: { username: 'alice', level: 'n1', password: 'p-1234' } });
    expect(created.status).toBe(409);
    expect(emu.state().sshUsers.map((u) => [u.id, u.username])).toEqual([[id, 'alice']]);
    expect(emu.requests()).toMatchObject([{ method: 'POST', status: 409, fault: 'rename' }]);
  });

  it('a request of another client that the service refuses changes nothing', async () => {
    emu.seed({ sshUsers: [{ username: 'a' }, { username: 'b' }] });
    emu.setFaults({ rules: [{ method: 'GET', anotherClient: { method: 'PUT', path: `${USERS}/1`, body: { username: 'b' } } }] });
    expect((await call(emu.url, 'GET', USERS)).status).toBe(200);
    expect(emu.state().sshUsers.map((u) => u.username)).toEqual(['a', 'b']);
    expect(faultRuleSchema.safeParse({ anotherClient: { method: 'PUT', path: '/_emulator/reset' } }).success).toBe(false);
  });
});

describe('a listing that shifts between pages (a service sorting by name)', () => {
  it('shiftPage renames an item of an earlier page and lists it again on this page: one id, two names', async () => {
    emu.seed({ sshUsers: ['a', 'b', 'c', 'd', 'e'].map((username) => ({ username })) });
    emu.setFaults({ rules: [{ label: 'shift', method: 'GET', path: '^/api/sshusers$', after: 1, times: 1, shiftPage: { id: 1, to: 'zz-alice' } }] });
    const pages = await listAll(emu.url, USERS, 'users', 2);
    const seen = pages.flatMap((p) => p.items.map((i) => `${i.id}:${(i as { username?: string }).username}`));
    expect(seen).toEqual(['1:a', '2:b', '3:c', '4:d', '1:zz-alice', '5:e']);
    expect(emu.state().sshUsers[0]!.username).toBe('zz-alice');
  });

  it('on the first page, or for an item not yet listed, the rename shows once', async () => {
    emu.seed({ count: { apikeys: 4 } });
    emu.setFaults({ rules: [{ method: 'GET', path: '^/api/3rdparty/apikeys$', times: 1, shiftPage: { id: 3, to: 'renamed' } }] });
    const pages = await listAll(emu.url, KEYS, 'apikeys', 2);
    expect(pages.flatMap((p) => p.items.map((i) => (i as { name?: string }).name))).toEqual(['bench-key-1', 'bench-key-2', 'renamed', 'bench-key-4']);
  });
});

describe('error bodies that echo secrets', () => {
  const password = 'q"u\\oé pass';
  const forms = (v: string) => [v, JSON.stringify(v).slice(1, -1), encodeURIComponent(v)];

  it('echo "json" quotes the request body, its strings and the bearer token raw, JSON-escaped and URL-encoded', async () => {
    emu.setFaults({ rules: [{ method: 'POST', status: 400, echo: 'json' }] });
    const res = await call(emu.url, 'POST', USERS, { body: { username: 'u1', level: 'n1', password } });
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/json');
    const msg = errorsOf(res)[0]!.msg;
    for (const form of [...forms(password), ...forms(TOKEN)]) expect(msg).toContain(form);
    expect(emu.state().sshUsers).toEqual([]);
  });

  it('echo "text" answers a text/html page quoting the token of the apikey the path names', async () => {
    const seeded = emu.seed({ apikeys: [{ name: 'k' }] });
    emu.setFaults({ rules: [{ method: 'DELETE', status: 502, echo: 'text' }] });
    const res = await call(emu.url, 'DELETE', `${KEYS}/${seeded.apikeys[0]!.id}`);
    expect(res.status).toBe(502);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain(seeded.apikeys[0]!.token);
    expect(emu.state().apikeys).toHaveLength(1);
    expect(faultRuleSchema.safeParse({ echo: 'json' }).success).toBe(false);
    expect(faultRuleSchema.safeParse({ status: 200, echo: 'json' }).success).toBe(false);
  });
});

describe('a body that never ends', () => {
  it('endless streams a list answer until the client hangs up; the log shows it undelivered, without a next', async () => {
    emu.seed({ count: { sshUsers: 3 } });
    emu.setFaults({ rules: [{ label: 'endless', method: 'GET', endless: true }] });
    const received = await new Promise<number>((resolve, reject) => {
      let bytes = 0;
      const req = httpRequest(`${emu.url}${USERS}`, { headers: { authorization: `Bearer ${TOKEN}` }, agent: false }, (res) => {
        res.on('data', (c: Buffer) => {
          bytes += c.length;
          if (bytes > 4 * 1024 * 1024) req.destroy();
        });
        res.on('close', () => resolve(bytes));
      });
      req.on('error', (e) => (bytes > 0 ? resolve(bytes) : reject(e)));
      req.end();
    });
    expect(received).toBeGreaterThan(4 * 1024 * 1024);
    for (let i = 0; i < 200 && emu.inFlight() > 0; i += 1) await new Promise((r) => setTimeout(r, 10));
    expect(emu.inFlight()).toBe(0);
    expect(emu.requests()).toEqual([expect.objectContaining({ method: 'GET', status: 200, fault: 'endless', undelivered: true })]);
    expect(emu.requests()[0]).not.toHaveProperty('next');
  });
});

describe('the request log names the item each write acted on', () => {
  it('created or changed as it became, deleted as it was, also when the answer was lost', async () => {
    const seeded = emu.seed({ sshUsers: [{ username: 'gone' }], apikeys: [{ name: 'k' }] });
    emu.setFaults({ rules: [{ method: 'PUT', commitThenFail: 502 }] });
    await call(emu.url, 'POST', USERS, { body: { username: 'new', level: 'n1', password: 'pw-1234' } });
    await call(emu.url, 'PUT', `${KEYS}/${seeded.apikeys[0]!.id}`, { body: { name: 'k2' } });
    await call(emu.url, 'DELETE', `${USERS}/${seeded.sshUsers[0]!.id}`);
    await call(emu.url, 'DELETE', `${USERS}/999`);
    expect(emu.requests().map((r) => [r.method, r.status, r.item])).toEqual([
      ['POST', 200, { id: 2, name: 'new' }],
      ['PUT', 502, { id: seeded.apikeys[0]!.id, name: 'k2' }],
      ['DELETE', 200, { id: seeded.sshUsers[0]!.id, name: 'gone' }],
      ['DELETE', 404, undefined],
    ]);
  });
});

describe('the request log names the client of each request (two processes, one service)', () => {
  it('a request carrying a labelled token names its label; others, and requests without a token, name none', async () => {
    emu.setTokens({ tokens: [TOKEN, ROTATED] });
    emu.setClientLabels({ [TOKEN]: 'writer-1' });
    await call(emu.url, 'GET', USERS);
    await call(emu.url, 'GET', USERS, { token: ROTATED });
    await call(emu.url, 'GET', USERS, { token: null });
    emu.setClientLabels({ [ROTATED]: 'writer-2' });
    await call(emu.url, 'POST', USERS, { token: ROTATED, body: { username: 'u', level: 'n1', password: 'pw-1234' } });
    expect(emu.requests().map((r) => [r.status, r.client])).toEqual([
      [200, 'writer-1'],
      [200, undefined],
      [401, undefined],
      [200, 'writer-2'],
    ]);
    // The label, never the token, is what the log shows.
    expect(JSON.stringify(emu.requests())).not.toContain(ROTATED);
    emu.setClientLabels({});
  });
});

describe('whether an integrator key still works, asked without using it', () => {
  it('refreshTokenAccepted answers for the current key, a rotated-out one past its grace, and an unknown one, and exchanges nothing', async () => {
    let now = 1_000_000;
    const oauthEmu = await startEmulator({ refreshTokens: ['key-1'], rotateRefreshTokens: true, refreshTokenGraceSeconds: 0, clock: () => now });
    try {
      expect(oauthEmu.refreshTokenAccepted('key-1')).toBe(true);
      expect(oauthEmu.refreshTokenAccepted('no-such-key')).toBe(false);
      const exchanged = await call(oauthEmu.url, 'POST', '/api/v1/oauth2/token', { token: null, body: { grant_type: 'refresh_token', refresh_token: 'key-1' } });
      const rotated = (exchanged.json as { refresh_token: string }).refresh_token;
      now += 1;
      expect([oauthEmu.refreshTokenAccepted('key-1'), oauthEmu.refreshTokenAccepted(rotated)]).toEqual([false, true]);
      expect(oauthEmu.oauth().exchanges).toBe(1);
    } finally {
      await oauthEmu.close();
    }
  });
});
