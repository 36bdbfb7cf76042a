import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import type { AmClient, ApiError } from '../../../src/api/index.js';
import { Secret } from '../../../src/secrets/secret.js';
import { forms } from '../../helpers/encodings.js';
import { mockClient, service, testToken, useStrictHttpMock } from '../../helpers/http-mock.js';

useStrictHttpMock();

/** Canaries: if any of these shows up in an error, an event or an inspected object, a secret leaked. */
const passwordCanary = 'pw-canary-9c41e7';
const apikeyTokenCanary = 'apikey-token-canary-0b7f';
const canaries = [testToken, passwordCanary, apikeyTokenCanary];

let client: AmClient | undefined;
let seen: unknown[] = [];
afterEach(() => {
  client?.close();
  client = undefined;
});

function watched(overrides: Parameters<typeof mockClient>[0] = {}): AmClient {
  seen = [];
  const c = mockClient(overrides);
  for (const name of ['request', 'retry', 'throttle', 'token'] as const) c.events.on(name, (event: unknown) => seen.push(event));
  client = c;
  return c;
}

async function failure(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  return error as ApiError;
}

function expectNoCanary(error: Error): void {
  const surfaces = [error.message, String(error), inspect(error, { depth: 10 }), JSON.stringify(error), JSON.stringify(seen), inspect(seen, { depth: 10 })];
  for (const text of surfaces) {
    for (const canary of canaries) expect(text).not.toContain(canary);
  }
}

const newUser = () => ({ username: 'deploy', level: 'n1', password: new Secret(passwordCanary) });

describe('a secret planted as a canary never appears in an error message or an event', () => {
  it('malformed JSON that echoes the password and the bearer token', async () => {
    service()
      .post('/api/sshusers')
      .reply(200, `{"id": 1, "echo": "Bearer ${testToken}", "password": "${passwordCanary}", "note": "${passwordCanary}"`);
    const error = await failure(watched().createSshUser(newUser()));
    expect(error.code).toBe('bad_response');
    expect(error.message).toContain('not JSON');
    expect(error.message).toContain('body: {"id": 1');
    expectNoCanary(error);
  });

  it('a wrongly shaped item whose token and password are blanked in the excerpt', async () => {
    service()
      .get('/api/3rdparty/apikeys/1')
      .reply(200, { id: 1, name: 'k', superuser: 'no', roles: [], token: apikeyTokenCanary, password: passwordCanary });
    const error = await failure(watched().fetchApikey(1));
    expect(error.code).toBe('bad_response');
    expect(error.message).toContain('superuser');
    expect(error.message).toContain('"token":"[redacted]"');
    expectNoCanary(error);
  });

  it('a 500 whose body echoes the request', async () => {
    service()
      .put('/api/sshusers/7')
      .times(2)
      .reply(500, `<html>debug: authorization=Bearer ${testToken} body={"password":"${passwordCanary}"}</html>`);
    const error = await failure(watched({ retry: { maxAttempts: 2 } }).updateSshUser(7, { password: new Secret(passwordCanary) }));
    expect(error.code).toBe('server_error');
    expectNoCanary(error);
  });

  it('service error messages that quote the password are scrubbed', async () => {
    service()
      .post('/api/sshusers')
      .reply(400, { errors: [{ field: 'password', type: 'rule', msg: `password ${passwordCanary} is too weak` }] });
    const error = await failure(watched().createSshUser(newUser()));
    expect(error.code).toBe('bad_request');
    expect(error.errors[0]).toMatchObject({ field: 'password', type: 'rule', msg: 'password [redacted] is too weak' });
    expectNoCanary(error);
  });

  it('a network failure carries no request options (which hold the Authorization header)', async () => {
    service()
      .get('/api/sshusers/7')
      .times(2)
      .replyWithError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    const error = await failure(watched({ retry: { maxAttempts: 2 } }).fetchSshUser(7));
    expect(error.code).toBe('network');
    expectNoCanary(error);
  });

  it('an apikey token read back stays a Secret everywhere it could print', async () => {
    service()
      .get('/api/3rdparty/apikeys/1')
      .reply(200, { id: 1, name: 'k', superuser: false, roles: [], token: apikeyTokenCanary });
    const key = await watched().fetchApikey(1);
    expect(key?.token?.reveal()).toBe(apikeyTokenCanary);
    for (const text of [JSON.stringify(key), inspect(key), String(key?.token), JSON.stringify(seen)]) {
      expect(text).not.toContain(apikeyTokenCanary);
    }
  });
});

describe('a secret the service echoes escaped or encoded is scrubbed too (issue 12, findings 3 and 4)', () => {
  // A quote, a backslash, non-ASCII and a space: JSON.stringify writes it as "q\"u\\oé pw".
  const password = 'q"u\\oé pw-7c1d';
  const listedToken = 'listed+apikey/token=5e0b';
  const everyForm = forms([password, listedToken, testToken]);

  function expectNoForm(error: Error): void {
    const surfaces = [error.message, inspect(error, { depth: 10 }), JSON.stringify((error as ApiError).errors ?? [])];
    for (const text of surfaces) expect(everyForm.filter((form) => text.includes(form))).toEqual([]);
  }

  it('a 400 whose structured errors quote the password JSON-escaped', async () => {
    service()
      .post('/api/sshusers')
      .reply(400, (_uri, body) => ({ errors: [{ field: 'password', type: 'rule', msg: `rejected ${JSON.stringify(body)}: password ${JSON.stringify(password)}` }] }));
    const error = await failure(watched().createSshUser({ username: 'deploy', level: 'n1', password: new Secret(password) }));
    expect(error.code).toBe('bad_request');
    expect(error.errors[0]).toMatchObject({ field: 'password', type: 'rule' });
    expect(error.errors[0]!.msg).toContain('password "[redacted]"');
    expectNoForm(error);
  });

  it('a 500 whose JSON body of another shape quotes the request (re-encoded for the excerpt)', async () => {
    service()
      .put('/api/sshusers/7')
      .reply(500, (_uri, body) => ({ error: 'internal', request: JSON.stringify(body) }));
    const error = await failure(watched({ retry: { maxAttempts: 1 } }).updateSshUser(7, { password: new Secret(password) }));
    expect(error.code).toBe('server_error');
    expect(error.message).toMatch(/500 internal server error: \{"error":"internal","request":"\{\\"password\\":\\"\[redacted\]\\"\}"\}/);
    expectNoForm(error);
  });

  it('a 502 text body that quotes an apikey token known only from the listing', async () => {
    service()
      .get('/api/3rdparty/apikeys')
      .query(true)
      .reply(200, { cursor: { current: 0, next: null, previous: null }, apikeys: [{ id: 4, name: 'ci', superuser: false, roles: [], token: listedToken }] });
    service()
      .put('/api/3rdparty/apikeys/4')
      .reply(502, `bad gateway: upstream key ${listedToken} / ${encodeURIComponent(listedToken)} / ${JSON.stringify(listedToken)}`, { 'content-type': 'text/plain' });
    const c = watched({ retry: { maxAttempts: 1 } });
    await c.listApikeys();
    const error = await failure(c.updateApikey(4, { roles: [1] }));
    expect(error.message).toContain('bad gateway: upstream key [redacted] / [redacted] / "[redacted]"');
    expectNoForm(error);
  });
});
