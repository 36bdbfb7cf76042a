import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KubeSecretError, KubeSecretSink, kubeSecretApi } from '../../../src/kube/index.js';
import { Secret } from '../../../src/secrets/index.js';
import { SecretBackend, startSecretApi } from '../../helpers/fake-secret-api.js';

/**
 * The Kubernetes Secret sink through the real client (@kubernetes/client-node) against a fake
 * API server on 127.0.0.1 that enforces resourceVersion, permissions and 404s.
 */
const ref = { namespace: 'amsync', name: 'amsync-tokens' };
const path = '/api/v1/namespaces/amsync/secrets';
let backend: SecretBackend;
let api: Awaited<ReturnType<typeof startSecretApi>>;
let url = '';

beforeEach(async () => {
  backend = new SecretBackend();
  api = await startSecretApi(backend);
  url = api.url;
});
afterEach(() => api.close());

const sink = (attempts?: number) => new KubeSecretSink({ ref, api: () => kubeSecretApi(ref, { url, skipTLSVerify: true }), ...(attempts === undefined ? {} : { attempts }) });
const token = (value: string) => new Secret(value);

describe('KubeSecretSink against a fake API server', () => {
  it('creates the missing Secret (404) with one base64 data key per item, and writes nothing when it already holds the token', async () => {
    const s = sink();
    expect(await s.write('CI deploy', token('tok-create-1'))).toBe(true);
    expect(backend.requests).toEqual([`GET ${path}/amsync-tokens`, `POST ${path}`]);
    const stored = backend.secrets.get('amsync-tokens')!;
    expect(stored.data).toEqual({ CI_20deploy: Buffer.from('tok-create-1').toString('base64') });
    expect(stored.metadata.labels).toEqual({ 'app.kubernetes.io/managed-by': 'amsync' });
    expect(await s.write('CI deploy', token('tok-create-1'))).toBe(false);
    expect(backend.requests).toHaveLength(3); // one more read, no write
  });

  it('updates with the resourceVersion it read, and leaves data keys it does not write alone', async () => {
    const s = sink();
    await s.write('a', token('tok-a-1'));
    backend.touch('amsync-tokens', 'other-tool', 'kept');
    const version = backend.secrets.get('amsync-tokens')!.metadata.resourceVersion;
    expect(await s.write('b', token('tok-b-1'))).toBe(true);
    expect(backend.putVersions).toEqual([version]);
    expect(backend.value('amsync-tokens', 'other-tool')).toBe('kept');
    expect(backend.value('amsync-tokens', 'a')).toBe('tok-a-1');
    expect(backend.value('amsync-tokens', 'b')).toBe('tok-b-1');
  });

  it('on 409 (written by someone else between its read and its write) reads again and retries', async () => {
    const s = sink();
    await s.write('a', token('tok-a-2'));
    backend.beforeNextPut = (b) => b.touch('amsync-tokens', 'someone-else', 'theirs');
    expect(await s.write('b', token('tok-b-2'))).toBe(true);
    expect(backend.requests.filter((r) => r.startsWith('PUT'))).toHaveLength(2);
    const [stale, fresh] = backend.putVersions;
    expect(stale).not.toBe(fresh);
    expect(backend.value('amsync-tokens', 'someone-else')).toBe('theirs');
    expect(backend.value('amsync-tokens', 'b')).toBe('tok-b-2');
  });

  it('gives up after a bounded number of conflicts in a row, with a line that says so', async () => {
    const s = sink(3);
    await s.write('a', token('tok-a-3'));
    const again = (b: SecretBackend) => {
      b.touch('amsync-tokens', 'busy', String(Math.random()));
      b.beforeNextPut = again;
    };
    backend.beforeNextPut = again;
    const error = await s.write('b', token('tok-b-3')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KubeSecretError);
    expect((error as Error).message).toBe(
      'cannot write the Secret amsync/amsync-tokens: it was changed by someone else 3 times in a row while amsync wrote it (409 Conflict on its resourceVersion); the next run tries again; its token was not written',
    );
    expect(backend.requests.filter((r) => r.startsWith('PUT'))).toHaveLength(3);
    backend.beforeNextPut = undefined;
  });

  it.each(['get', 'create', 'update'] as const)('a 403 on %s names the verb and resource the RBAC lacks, and no token', async (verb) => {
    const s = sink();
    if (verb === 'update') await s.write('a', token('tok-a-4'));
    backend.allowed.delete(verb);
    const secret = 'tok-forbidden-4';
    const error = await s.write('b', token(secret)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KubeSecretError);
    const message = (error as Error).message;
    expect(message).toBe(
      verb === 'create'
        ? 'cannot write the Secret amsync/amsync-tokens: the Kubernetes API server refused to create it (403 Forbidden): the service account lacks the RBAC verb "create" on resource "secrets" in namespace amsync; create the Secret beforehand (as examples/kubernetes/token-secret.yaml does), or grant create on secrets in a Role (it cannot be limited to one name); its token was not written'
        : `cannot write the Secret amsync/amsync-tokens: the Kubernetes API server refused to ${verb} it (403 Forbidden): the service account lacks the RBAC verb "${verb}" on resource "secrets" (resourceNames: [amsync-tokens]) in namespace amsync; grant get and update on it in a Role (examples/kubernetes/token-secret.yaml); its token was not written`,
    );
    expect(message).not.toContain(secret);
    expect(message).not.toContain(Buffer.from(secret).toString('base64'));
  });

  it('writes made at once go in one read-modify-write, so a run\'s creates do not conflict with each other', async () => {
    const s = sink();
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => s.write(`key-${i}`, token(`tok-many-${i}`))));
    expect(results.every(Boolean)).toBe(true);
    expect(backend.requests).toEqual([`GET ${path}/amsync-tokens`, `POST ${path}`]);
    for (let i = 0; i < 10; i += 1) expect(backend.value('amsync-tokens', `key-${i}`)).toBe(`tok-many-${i}`);
  });

  it('keepCurrent writes only what differs; a name too long for a data key is an error for that item alone', async () => {
    const s = sink();
    await s.write('a', token('tok-a-5'));
    const long = 'x'.repeat(300);
    const kept = await s.keepCurrent([
      { name: 'a', token: token('tok-a-5') },
      { name: 'b', token: token('tok-b-5') },
      { name: long, token: token('tok-long-5') },
    ]);
    expect(kept.written).toBe(1);
    expect(kept.errors.map((e) => [e.name, e.error.code])).toEqual([[long, 'kube_secret_key']]);
    expect(kept.errors[0]!.error.message).toContain('past the 253 Kubernetes allows');
    expect(backend.value('amsync-tokens', 'b')).toBe('tok-b-5');
    expect(backend.putVersions).toHaveLength(1);
  });

  it('keepCurrent of a Secret it may not read: every item says why, none is written', async () => {
    backend.allowed.delete('get');
    const kept = await sink().keepCurrent([
      { name: 'a', token: token('tok-a-6') },
      { name: 'b', token: token('tok-b-6') },
    ]);
    expect(kept).toMatchObject({ written: 0 });
    expect(kept.errors.map((e) => e.name)).toEqual(['a', 'b']);
    expect(kept.errors[0]!.error.message).toContain('refused to get it (403 Forbidden)');
  });

  it('an API server that cannot be reached is one line with the errno', async () => {
    const closed = await startSecretApi(new SecretBackend());
    await closed.close();
    const s = new KubeSecretSink({ ref, api: () => kubeSecretApi(ref, { url: closed.url, skipTLSVerify: true }) });
    const error = await s.write('a', token('tok-a-7')).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/^cannot write the Secret amsync\/amsync-tokens: the Kubernetes API server could not be reached \([A-Z_]+\); its token was not written$/);
  });

  it('passwordSink: writes password__<username> beside a token of the same name, reads them back in one GET, and a refusal ends with "its password was not written"', async () => {
    const s = sink();
    await s.write('deploy', token('tok-deploy-8'));
    const passwords = s.passwordSink();
    expect(passwords.describe).toBe('the Secret amsync/amsync-tokens');
    expect(await passwords.write('deploy', token('pw-deploy-8'))).toBe(true);
    expect(backend.value('amsync-tokens', 'deploy')).toBe('tok-deploy-8');
    expect(backend.value('amsync-tokens', 'password__deploy')).toBe('pw-deploy-8');
    expect(await passwords.write('deploy', token('pw-deploy-8'))).toBe(false);
    backend.requests.length = 0;
    expect([...(await passwords.readAll(['deploy', 'nobody']))]).toEqual([['deploy', 'pw-deploy-8']]);
    expect(backend.requests).toEqual([`GET ${path}/amsync-tokens`]);

    backend.allowed.delete('update');
    const error = await passwords.write('deploy', token('pw-deploy-9')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KubeSecretError);
    expect((error as Error).message).toMatch(/refused to update it \(403 Forbidden\).*; its password was not written$/);
    backend.allowed.delete('get');
    expect((await passwords.readAll(['deploy'])).size).toBe(0);
  });
});
