import { inspect } from 'node:util';
import { everyEncoding } from '../../helpers/encodings.js';
import { afterEach, describe, expect, it } from 'vitest';
import { ClientConfigError, CredentialError, type AmClient, type CredentialEvent } from '../../../src/api/index.js';
import { Secret } from '../../../src/secrets/secret.js';
import { mockClient, service, useStrictHttpMock } from '../../helpers/http-mock.js';

useStrictHttpMock();

/**
 * The client logging in with an integrator key (DESIGN.md §4) at the HTTP level: what it
 * sends to the token endpoint, that it sends no bearer token there, that its exchanges go
 * through the same retry policy, and that access tokens and keys are scrubbed like the
 * bearer token is.
 */

const KEY = 'ik-canary-"quote\\-9d1e';
const ACCESS = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJpIn0.acc-canary-77f2';
const ROTATED = 'rotated-key-canary-41aa';
const TOKEN_PATH = '/api/v1/oauth2/token';
const user = { id: 7, username: 'deploy', level: 'n1' };

let client: AmClient | undefined;
afterEach(() => {
  client?.close();
  client = undefined;
});

function keyClient(): AmClient {
  client = mockClient({ token: undefined, refreshToken: new Secret(KEY) });
  return client;
}

const exchangeBody = { grant_type: 'refresh_token', refresh_token: KEY };

describe('login with an integrator key', () => {
  it('exchanges the key once, without a bearer token, and sends the access token on every call', async () => {
    service()
      .post(TOKEN_PATH, exchangeBody)
      .matchHeader('content-type', 'application/json')
      .reply(function () {
        expect(this.req.headers.authorization).toBeUndefined();
        return [200, { access_token: ACCESS, refresh_token: KEY, expires_in: 900 }];
      })
      .get('/api/sshusers/7')
      .times(3)
      .matchHeader('authorization', `Bearer ${ACCESS}`)
      .reply(200, user);
    const c = keyClient();
    const events: CredentialEvent[] = [];
    c.events.on('credential', (e) => events.push(e));
    for (let i = 0; i < 3; i += 1) await expect(c.fetchSshUser(7)).resolves.toMatchObject({ id: 7 });
    expect(events).toEqual([{ action: 'exchanged', expiresInSeconds: 900 }]);
  });

  it('a 401 renews the access token once and repeats the call', async () => {
    service()
      .post(TOKEN_PATH, exchangeBody)
      .reply(200, { access_token: 'access-one', expires_in: 900 })
      .get('/api/sshusers/7')
      .matchHeader('authorization', 'Bearer access-one')
      .reply(401, { errors: [{ field: 'authorization', type: 'invalid', msg: 'expired' }] })
      .post(TOKEN_PATH, exchangeBody)
      .reply(200, { access_token: 'access-two', expires_in: 900 })
      .get('/api/sshusers/7')
      .matchHeader('authorization', 'Bearer access-two')
      .reply(200, user);
    await expect(keyClient().fetchSshUser(7)).resolves.toMatchObject({ id: 7 });
  });

  it('the exchange goes through the retry policy: a 503 with Retry-After is retried', async () => {
    service()
      .post(TOKEN_PATH, exchangeBody)
      .reply(503, '', { 'Retry-After': '0' })
      .post(TOKEN_PATH, exchangeBody)
      .reply(200, { access_token: ACCESS, expires_in: '900' })
      .get('/api/sshusers/7')
      .reply(200, user);
    const c = keyClient();
    const retries: string[] = [];
    c.events.on('retry', (e) => retries.push(`${e.method} ${e.route} ${e.status}`));
    await expect(c.fetchSshUser(7)).resolves.toMatchObject({ id: 7 });
    expect(retries).toEqual([`POST ${TOKEN_PATH} 503`]);
  });

  it('a rejected key is "integrator key rejected: …" and is not sent again', async () => {
    service()
      .post(TOKEN_PATH, exchangeBody)
      .reply(401, { errors: [{ field: 'refresh_token', type: 'invalid', msg: `unknown key ${KEY}` }] });
    const c = keyClient();
    const error = await c.fetchSshUser(7).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CredentialError);
    expect((error as Error).message).toMatch(/^integrator key rejected: POST \/api\/v1\/oauth2\/token answered 401: refresh_token invalid/);
    expect((error as Error).message).toContain('AMSYNC_REFRESH_TOKEN');
    // No second exchange: nock would fail the test on an unmatched request.
    await expect(c.listSshUsers()).rejects.toBeInstanceOf(CredentialError);
    expectNoSecret([(error as Error).message, inspect(error, { depth: 10 }), JSON.stringify(error)], [KEY]);
  });

  it('a failing token endpoint is named as the call that failed, not as the listing or write that needed it', async () => {
    service().post(TOKEN_PATH, exchangeBody).times(8).reply(500, { errors: [{ type: 'rule', msg: 'boom' }] });
    const listing = (await keyClient().listSshUsers().catch((e: unknown) => e)) as Error;
    expect(listing.message).toBe('GET /api/sshusers: not sent: POST /api/v1/oauth2/token: 500 internal server error: rule (boom) (gave up after 8 attempts)');
    client?.close();
    service().post(TOKEN_PATH, exchangeBody).times(8).reply(500);
    const write = (await keyClient().createSshUser({ username: 'u', level: 'n1', password: new Secret('Pw-12345678!') }).catch((e: unknown) => e)) as Error;
    expect(write.message).toMatch(/^POST \/api\/v1\/oauth2\/token: 500 internal server error/);
  });

  it.each([500, 502, 504])('an exchange answered %i is repeated (a second access token is harmless), and the call that waited for it goes on', async (status) => {
    service()
      .post(TOKEN_PATH, exchangeBody)
      .reply(status)
      .post(TOKEN_PATH, exchangeBody)
      .reply(200, { access_token: ACCESS, expires_in: 900 })
      .post('/api/sshusers')
      .matchHeader('authorization', `Bearer ${ACCESS}`)
      .reply(200, user);
    await expect(keyClient().createSshUser({ username: 'deploy', level: 'n1', password: new Secret('Pw-12345678!') })).resolves.toMatchObject({ id: 7 });
  });

  it('a token answer that is not one fails without showing the tokens it held', async () => {
    service().post(TOKEN_PATH, exchangeBody).reply(200, { access_token: 'has spaces inside', refresh_token: ROTATED });
    const error = await keyClient().fetchSshUser(7).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toMatch(/not a token answer \(access_token is missing or not a token\)/);
    expectNoSecret([error!.message], [ROTATED, 'has spaces inside', KEY]);
  });

  // The scrubber (redact.ts) decides the encodings it removes; this checks that the key and
  // every access and rotated token reach it as known secrets.
  it('access tokens, the key and rotated keys are known secrets: scrubbed from error messages', async () => {
    // As the daemon runs it: a key from AMSYNC_REFRESH_TOKEN that rotates is kept in memory
    // (a one-shot run stops there: integrator_key_not_persisted).
    client = mockClient({ token: undefined, refreshToken: new Secret(KEY), keepUnpersistedKey: true });
    const echoed = `${ACCESS} ${KEY} ${ROTATED}`;
    service()
      .post(TOKEN_PATH, exchangeBody)
      .reply(200, { access_token: ACCESS, refresh_token: ROTATED, expires_in: 900 })
      .get('/api/sshusers/7')
      .reply(400, { errors: [{ field: 'id', type: 'invalid', msg: echoed }] });
    const error = await client.fetchSshUser(7).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toContain('400');
    expectNoSecret([error!.message, inspect(error, { depth: 10 })], [ACCESS, KEY, ROTATED]);
  });

  it('refuses a token and an integrator key together (sends nothing)', () => {
    expect(() => mockClient({ refreshToken: new Secret(KEY) })).toThrow(ClientConfigError);
  });
});

/** No secret in any text, raw or in any encoding a server might echo it in (JSON-escaped, URL-encoded, ...). */
function expectNoSecret(texts: readonly string[], secrets: readonly string[]): void {
  for (const text of texts) {
    for (const secret of secrets) {
      for (const [encoding, form] of Object.entries(everyEncoding(secret))) expect(text, `${encoding} form of a secret`).not.toContain(form);
    }
  }
}
