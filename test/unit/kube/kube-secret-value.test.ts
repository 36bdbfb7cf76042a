import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KubeCallError, KubeSecretValue, KubeValueMissingError, kubeSecretApi } from '../../../src/kube/index.js';
import { SecretBackend, startSecretApi } from '../../helpers/fake-secret-api.js';

/** One data key of one Secret (the integrator key's), through the real client against the fake API server. */
const ref = { namespace: 'amsync', name: 'amsync-credentials' };
const path = '/api/v1/namespaces/amsync/secrets';
let backend: SecretBackend;
let api: Awaited<ReturnType<typeof startSecretApi>>;

beforeEach(async () => {
  backend = new SecretBackend();
  api = await startSecretApi(backend);
  backend.handle('POST', path, JSON.stringify({ metadata: { name: ref.name }, data: { 'integrator-key': Buffer.from('key-1\n').toString('base64'), other: Buffer.from('kept').toString('base64') } }));
});
afterEach(() => api.close());

const value = (attempts?: number) => new KubeSecretValue('integrator-key', () => kubeSecretApi(ref, { url: api.url, skipTLSVerify: true }), attempts);

describe('KubeSecretValue', () => {
  it('reads its data key, and writes it with the resourceVersion it read, other keys left alone; the same value is not written', async () => {
    const v = value();
    expect(await v.read()).toBe('key-1\n');
    const version = backend.secrets.get(ref.name)!.metadata.resourceVersion;
    await v.write('key-2');
    expect(backend.putVersions).toEqual([version]);
    expect(backend.value(ref.name, 'integrator-key')).toBe('key-2');
    expect(backend.value(ref.name, 'other')).toBe('kept');
    await v.write('key-2');
    expect(backend.putVersions).toHaveLength(1);
  });

  it('a 409 (someone wrote the Secret in between) reads again and retries; a run of them gives up with the 409', async () => {
    backend.beforeNextPut = (b) => b.touch(ref.name, 'someone-else', 'theirs');
    await value().write('key-3');
    expect(backend.requests.filter((r) => r.startsWith('PUT'))).toHaveLength(2);
    expect(backend.value(ref.name, 'integrator-key')).toBe('key-3');
    expect(backend.value(ref.name, 'someone-else')).toBe('theirs');

    const busy = (b: SecretBackend): void => {
      b.touch(ref.name, 'someone-else', String(Math.random()));
      b.beforeNextPut = busy;
    };
    backend.beforeNextPut = busy;
    const error = await value(2).write('key-4').catch((e: unknown) => e);
    backend.beforeNextPut = undefined;
    expect(error).toBeInstanceOf(KubeCallError);
    expect((error as KubeCallError).status).toBe(409);
    expect(backend.value(ref.name, 'integrator-key')).toBe('key-3');
  });

  it('never creates the Secret: a missing Secret or data key is KubeValueMissingError; a refused verb is KubeCallError', async () => {
    const missingKey = await new KubeSecretValue('nope', () => kubeSecretApi(ref, { url: api.url, skipTLSVerify: true })).read().catch((e: unknown) => e);
    expect(missingKey).toMatchObject({ what: 'key' });
    backend.secrets.clear();
    expect(await value().read().catch((e: unknown) => e)).toBeInstanceOf(KubeValueMissingError);
    expect(await value().write('key-5').catch((e: unknown) => e)).toMatchObject({ what: 'secret' });
    expect(backend.requests.some((r) => r.startsWith('POST'))).toBe(false);
    backend.allowed.delete('get');
    expect(await value().read().catch((e: unknown) => e)).toMatchObject({ verb: 'get', status: 403 });
  });
});
