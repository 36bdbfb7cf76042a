import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defaultFaultSettings, startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { call, errorsOf, RO_TOKEN, RW_TOKEN } from '../helpers/emulator-client.js';

/**
 * The real service's login, as the emulator models it (DESIGN.md §1): an integrator key
 * (refresh token) exchanged at `POST /api/v1/oauth2/token` for access tokens that expire, with
 * optional rotation, revocation through the control API, and `GET /api/user/info`. The
 * emulator's clock is the test's: time moves by assignment, never by waiting.
 */

const TOKEN_PATH = '/api/v1/oauth2/token';
const USERS = '/api/sshusers';
const KEY = 'integrator-key-1f9c';
const JWT = /^eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

let now = Date.parse('2025-03-01T12:00:00Z');
const clock = () => now;
const started: RunningEmulator[] = [];

async function emulator(options: Parameters<typeof startEmulator>[0] = {}): Promise<RunningEmulator> {
  const e = await startEmulator({ tokens: [RW_TOKEN], readOnlyTokens: [RO_TOKEN], refreshTokens: [KEY], clock, ...options });
  started.push(e);
  return e;
}

interface TokenAnswer {
  access_token: string;
  refresh_token: string;
  expires_in: number;
}

async function exchange(e: RunningEmulator, refreshToken: unknown, grant: unknown = 'refresh_token') {
  return call(e.url, 'POST', TOKEN_PATH, { token: null, body: { grant_type: grant, refresh_token: refreshToken } });
}

const MISSING = Symbol('missing');

async function tokens(e: RunningEmulator, refreshToken: string): Promise<TokenAnswer> {
  const res = await exchange(e, refreshToken);
  expect(res.status, res.text).toBe(200);
  return res.json as TokenAnswer;
}

afterEach(async () => {
  for (const e of started.splice(0)) await e.close();
});

describe('POST /api/v1/oauth2/token (--refresh-token)', () => {
  it('answers a JWT-shaped access token that works until expires_in, then 401', async () => {
    const e = await emulator({ accessTokenTtlSeconds: 900 });
    const answer = await tokens(e, KEY);
    expect(answer).toEqual({ access_token: expect.stringMatching(JWT), refresh_token: KEY, token_type: 'Bearer', expires_in: 900 });
    expect((await call(e.url, 'GET', USERS, { token: answer.access_token })).status).toBe(200);
    now += 899_000;
    expect((await call(e.url, 'POST', USERS, { token: answer.access_token, body: { username: 'u', level: 'n1', password: 'p' } })).status).toBe(200);
    now += 1_000;
    const expired = await call(e.url, 'GET', USERS, { token: answer.access_token });
    expect(expired.status).toBe(401);
    expect(errorsOf(expired)[0]!.msg).toMatch(/expired/);
    expect(expired.headers['www-authenticate']).toMatch(/invalid_token/);
    // A new exchange gives a new token.
    const again = await tokens(e, KEY);
    expect(again.access_token).not.toBe(answer.access_token);
    expect((await call(e.url, 'GET', USERS, { token: again.access_token })).status).toBe(200);
  });

  it('the default lifetime is 900 s, as on the real service', async () => {
    const e = await emulator();
    expect((await tokens(e, KEY)).expires_in).toBe(900);
  });

  it('refuses a bad request with 400 and an unknown key with 401, in the service error format', async () => {
    const e = await emulator();
    const cases: [unknown, unknown, number, string][] = [
      [KEY, 'password', 400, 'grant_type'],
      [KEY, MISSING, 400, 'grant_type'],
      [MISSING, 'refresh_token', 400, 'refresh_token'],
      ['', 'refresh_token', 400, 'refresh_token'],
      ['not-a-key', 'refresh_token', 401, 'refresh_token'],
    ];
    for (const [key, grant, status, field] of cases) {
      const body = { ...(grant === MISSING ? {} : { grant_type: grant }), ...(key === MISSING ? {} : { refresh_token: key }) };
      const res = await call(e.url, 'POST', TOKEN_PATH, { token: null, body });
      expect(res.status, JSON.stringify([key, grant])).toBe(status);
      expect(errorsOf(res)[0]!.field).toBe(field);
    }
    expect((await call(e.url, 'POST', TOKEN_PATH, { token: null, body: '{"grant_type":' })).status).toBe(400);
    const get = await call(e.url, 'GET', TOKEN_PATH, { token: null });
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST');
    expect(e.oauth()).toMatchObject({ exchanges: 0, rejected: 6 });
  });

  it('is not there without an integrator key (404)', async () => {
    const e = await startEmulator({ tokens: [RW_TOKEN] });
    started.push(e);
    expect((await exchange(e, KEY)).status).toBe(404);
  });

  it('never logs or counts out a token: the request log holds path and query only', async () => {
    const e = await emulator();
    const answer = await tokens(e, KEY);
    const control = await call(e.url, 'GET', '/_emulator/oauth', { token: null });
    expect(control.json).toEqual({ enabled: true, accessTokenTtlSeconds: 900, rotate: false, graceSeconds: 60, exchanges: 1, rejected: 0, refreshTokens: 1, accessTokens: 1 });
    const everything = JSON.stringify([e.requests(), control.json]);
    expect(everything).not.toContain(KEY);
    expect(everything).not.toContain(answer.access_token);
    expect(e.requests()).toEqual([expect.objectContaining({ method: 'POST', path: TOKEN_PATH, query: {}, status: 200 })]);
  });

  it('the expireToken fault expires an issued access token', async () => {
    const e = await emulator();
    const answer = await tokens(e, KEY);
    e.setFaults({ ...defaultFaultSettings, rules: [{ method: 'GET', path: `^${USERS}$`, times: 1, expireToken: true }] });
    expect((await call(e.url, 'GET', USERS, { token: answer.access_token })).status).toBe(401);
    expect((await call(e.url, 'GET', USERS, { token: answer.access_token })).status).toBe(401);
  });
});

describe('--rotate-refresh-tokens', () => {
  it('each exchange answers a new JWT-shaped refresh token; the old one works for the grace, then 401', async () => {
    const e = await emulator({ rotateRefreshTokens: true, refreshTokenGraceSeconds: 30 });
    const first = await tokens(e, KEY);
    expect(first.refresh_token).toMatch(JWT);
    expect(first.refresh_token).not.toBe(KEY);
    const second = await tokens(e, first.refresh_token);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    // Within the grace the old key still answers (a client whose answer was lost can retry).
    now += 29_000;
    expect((await exchange(e, KEY)).status).toBe(200);
    now += 1_000;
    expect((await exchange(e, KEY)).status).toBe(401);
    now += 1_000;
    expect((await exchange(e, first.refresh_token)).status).toBe(401);
    expect((await exchange(e, second.refresh_token)).status).toBe(200);
  });
});

describe('control API: integrator keys', () => {
  it('revoke refuses the key and every token rotated from it; a new key works', async () => {
    const e = await emulator({ rotateRefreshTokens: true });
    const rotated = (await tokens(e, KEY)).refresh_token;
    const revoke = await call(e.url, 'POST', '/_emulator/oauth/revoke', { token: null, body: { refreshToken: KEY } });
    expect(revoke.status).toBe(200);
    expect((await exchange(e, KEY)).status).toBe(401);
    expect((await exchange(e, rotated)).status).toBe(401);
    expect((await call(e.url, 'POST', '/_emulator/oauth/revoke', { token: null, body: { refreshToken: KEY } })).status).toBe(404);
    expect((await call(e.url, 'POST', '/_emulator/oauth/revoke', { token: null, body: {} })).status).toBe(400);
    expect((await call(e.url, 'POST', '/_emulator/oauth/refresh-tokens', { token: null, body: { refreshToken: 'replacement-key' } })).status).toBe(200);
    expect((await exchange(e, 'replacement-key')).status).toBe(200);
    e.addRefreshToken('third-key');
    expect(e.revokeRefreshToken('third-key')).toBe(true);
    expect(e.revokeRefreshToken('third-key')).toBe(false);
  });
});

describe('GET /api/user/info', () => {
  it("answers the caller's owner_type and scopes: write follows the token's access", async () => {
    const e = await emulator();
    const scopes = (write: boolean) => [
      { name: 'sshusers', read: true, write },
      { name: 'apikeys', read: true, write },
      { name: 'roles', read: true, write: false },
    ];
    expect((await call(e.url, 'GET', '/api/user/info', { token: RW_TOKEN })).json).toEqual({ owner_type: 'integrator', scopes: scopes(true) });
    expect((await call(e.url, 'GET', '/api/user/info', { token: RO_TOKEN })).json).toEqual({ owner_type: 'integrator', scopes: scopes(false) });
    const issued = (await tokens(e, KEY)).access_token;
    expect((await call(e.url, 'GET', '/api/user/info', { token: issued })).json).toEqual({ owner_type: 'integrator', scopes: scopes(true) });
    expect((await call(e.url, 'GET', '/api/user/info', { token: null })).status).toBe(401);
    expect((await call(e.url, 'POST', '/api/user/info', { token: RW_TOKEN, body: {} })).status).toBe(405);
  });
});

describe('options', () => {
  it('are checked loudly', async () => {
    await expect(startEmulator({ refreshTokens: [KEY], accessTokenTtlSeconds: 0 })).rejects.toThrow('Expected `accessTokenTtlSeconds`');
    await expect(startEmulator({ refreshTokens: [KEY], refreshTokenGraceSeconds: -1 })).rejects.toThrow('Expected `refreshTokenGraceSeconds`');
    await expect(startEmulator({ refreshTokens: ['two words'] })).rejects.toThrow('Expected `refreshTokens`');
  });

  it('an integrator key alone is enough to start', async () => {
    const e = await startEmulator({ refreshTokens: [KEY], clock });
    started.push(e);
    const answer = await tokens(e, KEY);
    expect((await call(e.url, 'GET', USERS, { token: answer.access_token })).status).toBe(200);
  });
});

beforeAll(() => {
  now = Date.parse('2025-03-01T12:00:00Z');
});

afterAll(async () => {
  for (const e of started.splice(0)) await e.close();
});
