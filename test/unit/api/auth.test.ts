import { writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CredentialError, type ApiError, type AmClient, type TokenEvent } from '../../../src/api/index.js';
import { Secret } from '../../../src/secrets/secret.js';
import { mockClient, service, testToken, useStrictHttpMock } from '../../helpers/http-mock.js';

useStrictHttpMock();

const user = { id: 7, username: 'deploy', level: 'n1' };
let dir: string;
let client: AmClient | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-auth-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => {
  client?.close();
  client = undefined;
});

describe('a 401 re-reads the token file once, so rotated tokens work', () => {
  it('retries with the rotated token', async () => {
    const file = join(dir, 'rotating');
    await writeFile(file, 'token-old-1111\n');
    service()
      .get('/api/sshusers/7')
      .matchHeader('authorization', 'Bearer token-old-1111')
      // The token is rotated while the old one is being rejected.
      .reply(() => {
        writeFileSync(file, 'token-new-2222\n');
        return [401, ''];
      })
      .get('/api/sshusers/7')
      .matchHeader('authorization', 'Bearer token-new-2222')
      .reply(200, user);
    client = mockClient({ token: undefined, tokenFile: file });
    const tokens: TokenEvent[] = [];
    client.events.on('token', (event) => tokens.push(event));
    await expect(client.fetchSshUser(7)).resolves.toMatchObject({ id: 7 });
    expect(tokens).toEqual([{ method: 'GET', route: '/api/sshusers/{id}', changed: true }]);
  });

  // A 401 that stands is a credential error (issue 27: not `listing_incomplete` nor a service error).
  it('fails as token_rejected when the file still holds the rejected token', async () => {
    const file = join(dir, 'stale');
    await writeFile(file, 'token-stale-3333');
    service().get('/api/sshusers/7').reply(401);
    client = mockClient({ token: undefined, tokenFile: file });
    const error = (await client.fetchSshUser(7).catch((e: unknown) => e)) as CredentialError;
    expect(error).toBeInstanceOf(CredentialError);
    expect(error.code).toBe('token_rejected');
    expect(error.message).toContain('token rejected (401): missing, expired or wrong');
    expect(error.message).toContain(file);
    expect(error.message).not.toContain('token-stale-3333');
  });

  it('re-reads only once: a second 401 with the new token fails', async () => {
    const file = join(dir, 'twice');
    await writeFile(file, 'token-a-4444');
    service()
      .get('/api/sshusers/7')
      .matchHeader('authorization', 'Bearer token-a-4444')
      .reply(() => {
        writeFileSync(file, 'token-b-5555');
        return [401, ''];
      })
      .get('/api/sshusers/7')
      .matchHeader('authorization', 'Bearer token-b-5555')
      .reply(401);
    client = mockClient({ token: undefined, tokenFile: file });
    await expect(client.fetchSshUser(7)).rejects.toMatchObject({ code: 'token_rejected', status: 401, attempts: 2 });
  });

  it('a token given directly is not retried on 401', async () => {
    service().get('/api/sshusers/7').reply(401);
    client = mockClient();
    await expect(client.fetchSshUser(7)).rejects.toMatchObject({ code: 'token_rejected', attempts: 1 });
  });

  it('no token at all: token_unusable, and nothing is sent', async () => {
    client = mockClient({ token: undefined });
    const error = (await client.fetchSshUser(7).catch((e: unknown) => e)) as CredentialError;
    expect(error.code).toBe('token_unusable');
    expect(error.message).toMatch(/token missing/);
  });

  it('an unreadable token file: token_unusable, naming the file, and nothing is sent', async () => {
    client = mockClient({ token: undefined, tokenFile: join(dir, 'absent') });
    await expect(client.fetchSshUser(7)).rejects.toMatchObject({ code: 'token_unusable', message: expect.stringContaining('ENOENT') });
  });

  it('a token with a line break inside is refused before sending', async () => {
    client = mockClient({ token: new Secret('abc\r\nX-Injected: 1') });
    await expect(client.fetchSshUser(7)).rejects.toMatchObject({ code: 'token_unusable' });
  });
});

describe('a 403 names the method and path and hints at a read-only token', () => {
  it('fails as forbidden without retrying', async () => {
    service().put('/api/3rdparty/apikeys/3').reply(403, { errors: [{ type: 'rule', msg: 'read-only token' }] });
    client = mockClient();
    const error = (await client.updateApikey(3, { superuser: true }).catch((e: unknown) => e)) as ApiError;
    expect(error).toMatchObject({ code: 'forbidden', status: 403, method: 'PUT', path: '/api/3rdparty/apikeys/3', attempts: 1 });
    expect(error.message).toContain('PUT /api/3rdparty/apikeys/3');
    expect(error.message).toContain('read-only');
    expect(error.message).not.toContain(testToken);
  });
});
