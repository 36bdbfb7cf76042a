import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, ClientConfigError, createClient, type AmClient, type RequestEvent } from '../../../src/api/index.js';
import { Secret } from '../../../src/secrets/secret.js';
import { mockClient, service, testToken, useStrictHttpMock } from '../../helpers/http-mock.js';

useStrictHttpMock();

const user = { id: 7, username: 'deploy', level: 'n1', created_at: '2024-01-01T00:00:00Z', updated_at: '2024-01-02T00:00:00Z', extra: { any: 1 } };

let client: AmClient | undefined;
afterEach(() => {
  client?.close();
  client = undefined;
});

describe('every request carries the headers the service expects', () => {
  it('sends Accept, the bearer token and an amsync User-Agent', async () => {
    service()
      .get('/api/sshusers/7')
      .matchHeader('accept', 'application/json')
      .matchHeader('authorization', `Bearer ${testToken}`)
      .matchHeader('user-agent', /^amsync\/\d+\.\d+\.\d+/)
      .reply(200, user);
    client = mockClient();
    // The model's item: the timestamps and unknown fields are dropped where the answer is parsed.
    await expect(client.fetchSshUser(7)).resolves.toEqual({ id: 7, username: 'deploy', level: 'n1' });
  });

  it('resolves paths under a base URL that has a path of its own', async () => {
    const nock = (await import('nock')).default;
    nock('http://127.0.0.1:9').get('/am/api/sshusers/7').reply(200, user);
    client = mockClient({ url: 'http://127.0.0.1:9/am' });
    await expect(client.fetchSshUser(7)).resolves.toMatchObject({ id: 7 });
  });
});

describe('writes send JSON bodies and reveal secrets only there', () => {
  it('creates an SSH user with the password in the body', async () => {
    service()
      .post('/api/sshusers', { username: 'deploy', level: 'n1', password: 'pw-canary-31337' })
      .matchHeader('content-type', 'application/json')
      .reply(200, user);
    client = mockClient();
    await expect(client.createSshUser({ username: 'deploy', level: 'n1', password: new Secret('pw-canary-31337') })).resolves.toMatchObject({ id: 7 });
  });

  it('updates partially: only the fields given are sent', async () => {
    service().put('/api/sshusers/7', { level: 'n1' }).reply(200, user);
    client = mockClient();
    await expect(client.updateSshUser(7, { level: 'n1' })).resolves.toMatchObject({ id: 7 });
  });

  it('creates an apikey with role ids and reads back Role objects as sorted ids and a secret token', async () => {
    service()
      .post('/api/3rdparty/apikeys', { name: 'billing', superuser: false, roles: [7, 3] })
      .reply(200, { id: 4, name: 'billing', superuser: false, roles: [{ id: 7, name: 'b' }, { id: 3, name: 'a' }], token: 'tok-canary-777' });
    client = mockClient();
    service()
      .get('/api/3rdparty/apikeys/4')
      .reply(200, { id: 4, name: 'billing', superuser: false, roles: [{ id: 7, name: 'b' }, { id: 3, name: 'a' }], token: 'tok-canary-777' });
    const created = await client.createApikey({ name: 'billing', superuser: false, roles: [7, 3] });
    expect(created).toMatchObject({ id: 4, accepted: false });
    expect(created.token?.reveal()).toBe('tok-canary-777');
    expect(JSON.stringify(created)).not.toContain('tok-canary-777');
    const fetched = await client.fetchApikey(4);
    expect(fetched?.roles).toEqual([3, 7]);
    expect(JSON.stringify(fetched)).not.toContain('tok-canary-777');
  });

  it('takes a 202 as accepted: no item, the next listing confirms it', async () => {
    service().put('/api/3rdparty/apikeys/4', { superuser: true }).reply(202);
    client = mockClient();
    await expect(client.updateApikey(4, { superuser: true })).resolves.toEqual({ id: 4, accepted: true });
  });

  it('a fetch of an item the service does not have answers undefined: a 404 there means gone', async () => {
    service().get('/api/sshusers/9').reply(404, { errors: [{ field: 'id', type: 'not_found', msg: 'no such user' }] });
    client = mockClient();
    await expect(client.fetchSshUser(9)).resolves.toBeUndefined();
  });

  it('any other failure of a fetch is an error, never "gone" (a verified delete must not take it for one)', async () => {
    service().get('/api/sshusers/9').reply(403, { errors: [{ field: 'token', type: 'forbidden', msg: 'no read scope' }] });
    client = mockClient();
    await expect(client.fetchSshUser(9)).rejects.toMatchObject({ code: 'forbidden', status: 403 });
  });

  it('deletes', async () => {
    service().delete('/api/3rdparty/apikeys/4').reply(200, {});
    client = mockClient();
    await expect(client.deleteApikey(4)).resolves.toBeUndefined();
  });

  it('reports a 404 on delete as not_found, for the apply step to count as done', async () => {
    service()
      .delete('/api/sshusers/9')
      .reply(404, { errors: [{ field: 'id', type: 'not_found', msg: 'no such user' }] });
    client = mockClient();
    const error = await client.deleteSshUser(9).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'not_found', status: 404, method: 'DELETE', path: '/api/sshusers/9', route: '/api/sshusers/{id}' });
    expect((error as ApiError).errors).toEqual([{ field: 'id', type: 'not_found', msg: 'no such user' }]);
  });

  it('reports a duplicate as conflict with the service errors, and does not retry it', async () => {
    service()
      .post('/api/sshusers')
      .reply(409, { errors: [{ field: 'username', type: 'duplicated', msg: 'username already exists' }] });
    client = mockClient();
    const error = (await client.createSshUser({ username: 'deploy', level: 'n1', password: new Secret('pw-canary-31337') }).catch((e: unknown) => e)) as ApiError;
    expect(error.code).toBe('conflict');
    expect(error.errors[0]).toMatchObject({ field: 'username', type: 'duplicated' });
    expect(error.message).toContain('POST /api/sshusers');
    expect(error.message).toContain('username duplicated');
  });

  it('reports a 400 as bad_request', async () => {
    service()
      .post('/api/sshusers')
      .reply(400, { errors: [{ field: 'level', type: 'invalid', msg: 'bad level' }] });
    client = mockClient();
    await expect(client.createSshUser({ username: 'x', level: 'zz', password: new Secret('pw-canary-31337') })).rejects.toMatchObject({
      code: 'bad_request',
      status: 400,
    });
  });
});

describe('redirects are errors: the token never follows one', () => {
  it('does not follow a 301 and fails with bad_response', async () => {
    service().get('/api/sshusers/7').reply(301, '', { Location: 'https://elsewhere.example/steal' });
    client = mockClient();
    const error = (await client.fetchSshUser(7).catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.code).toBe('bad_response');
    expect(error.status).toBe(301);
    expect(error.message).toContain('redirect');
    expect(error.message).not.toContain('elsewhere');
  });

  it('does not follow a 307 on a write either', async () => {
    service().post('/api/sshusers').reply(307, '', { Location: 'http://127.0.0.1:9/other' });
    client = mockClient();
    await expect(client.createSshUser({ username: 'a', level: 'n1', password: new Secret('pw-canary-31337') })).rejects.toMatchObject({ code: 'bad_response', status: 307 });
  });
});

describe('plain http only on loopback', () => {
  it.each(['http://am.example.com', 'http://10.0.0.5:8080', 'http://127.example.com'])('refuses %s before sending anything', (url) => {
    const attempt = () => createClient({ url, token: new Secret(testToken) });
    expect(attempt).toThrow(ClientConfigError);
    expect(attempt).toThrow(/Refusing plain http/);
  });

  it.each(['http://127.0.0.1:8080', 'http://127.1.2.3', 'http://localhost:3000', 'http://[::1]:3000', 'https://am.example.com'])('accepts %s', (url) => {
    createClient({ url, token: new Secret(testToken) }).close();
  });

  it('accepts http to another host with allowInsecureHttp', () => {
    createClient({ url: 'http://am.example.com', token: new Secret(testToken), allowInsecureHttp: true }).close();
  });

  it('refuses credentials in the URL without echoing them', () => {
    const attempt = () => createClient({ url: 'https://user:pw-canary-31337@am.example.com' });
    expect(attempt).toThrow(ClientConfigError);
    expect(attempt).not.toThrow(/pw-canary-31337/);
  });

  it('refuses a CA file it cannot read', () => {
    expect(() => createClient({ url: 'https://am.example.com', caFile: 'no/such/ca.pem' })).toThrow(expect.objectContaining({ code: 'ca_file' }));
  });

  it('checks options loudly', () => {
    expect(() => createClient({ url: 'https://am.example.com', concurrency: 0 })).toThrow('Expected `concurrency` to be an integer from 1 upwards, got 0');
    expect(() => createClient({ url: 'https://am.example.com', pageSize: 1.5 })).toThrow(/pageSize/);
    expect(() => createClient({ url: 'https://am.example.com', rate: -1 })).toThrow(/rate/);
  });
});

describe('events, not logs', () => {
  it('emits one request event per attempt with the route template, status, duration, attempt and rate', async () => {
    service().get('/api/sshusers/7').reply(503).get('/api/sshusers/7').reply(200, user);
    client = mockClient();
    const seen: RequestEvent[] = [];
    client.events.on('request', (event) => seen.push(event));
    await client.fetchSshUser(7);
    expect(seen).toHaveLength(2);
    expect(seen[0]).toMatchObject({ method: 'GET', route: '/api/sshusers/{id}', status: 503, error: undefined, attempt: 1 });
    expect(seen[1]).toMatchObject({ method: 'GET', route: '/api/sshusers/{id}', status: 200, attempt: 2 });
    for (const event of seen) {
      expect(event.durationMs).toBeGreaterThanOrEqual(0);
      expect(event.rate).toBeGreaterThan(0);
    }
  });

  it('a listener that throws does not break the call', async () => {
    service().get('/api/sshusers/7').reply(200, user);
    client = mockClient();
    client.events.on('request', () => {
      throw new Error('faulty subscriber');
    });
    await expect(client.fetchSshUser(7)).resolves.toMatchObject({ id: 7 });
  });

  it('exposes the limiter rate', () => {
    client = mockClient({ rate: 42 });
    expect(client.limiter.rate).toBe(42);
    expect(client.limiter.ceiling).toBe(42);
  });
});

describe('closing the client', () => {
  it('a call waiting out a Retry-After fails at once instead of hanging', async () => {
    service().get('/api/sshusers/7').reply(503, '', { 'Retry-After': '60' });
    const c = mockClient();
    const retried = new Promise<void>((resolve) => c.events.once('retry', () => resolve()));
    const pending = c.fetchSshUser(7).catch((e: unknown) => e);
    await retried;
    c.close();
    await expect(pending).resolves.toMatchObject({ code: 'network', message: expect.stringContaining('closed') });
  });
});
