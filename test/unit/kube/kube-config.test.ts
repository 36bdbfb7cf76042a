import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { integratorKeySecretStore } from '../../../src/app/integrator-key-secret.js';
import { AmsyncError } from '../../../src/errors.js';
import { kubeSecretApi, KubeSecretSink, loadKubeConfig } from '../../../src/kube/index.js';
import { forms } from '../../helpers/encodings.js';

// A kubeconfig holds bearer tokens and client keys. The client library's error for a malformed
// one quotes the lines around the fault: amsync says which file and what kind of error, and never
// its text, on every path that loads it (the Lease, the token sink, the integrator key's Secret).

const TOKEN = 'kubeconfig-bearer-canary-"\\-ü-7f3a';
let dir: string;
const before = process.env.KUBECONFIG;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-kubeconfig-'));
  const bad = ['apiVersion: v1', 'kind: Config', 'users:', '  - name: amsync', '    user:', `      token: ${JSON.stringify(TOKEN)}`, '     badly: indented', ''].join('\n');
  await writeFile(join(dir, 'kubeconfig'), bad);
  process.env.KUBECONFIG = join(dir, 'kubeconfig');
});
afterAll(async () => {
  if (before === undefined) delete process.env.KUBECONFIG;
  else process.env.KUBECONFIG = before;
  await rm(dir, { recursive: true, force: true });
});

function expectNoToken(error: unknown): void {
  const text = `${String(error)}\n${(error as Error).stack ?? ''}\n${JSON.stringify(error)}`;
  for (const form of forms([TOKEN])) expect(text).not.toContain(form);
}

describe('a kubeconfig that cannot be loaded', () => {
  it('is an error naming the file and the kind of fault, without its text or a cause that quotes it', async () => {
    const error = await loadKubeConfig().then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(AmsyncError);
    expect((error as AmsyncError).code).toBe('kube_config');
    expect((error as Error).message).toContain(`KUBECONFIG ${join(dir, 'kubeconfig')}`);
    expect((error as Error).cause).toBeUndefined();
    expectNoToken(error);
  });

  it('the token sink and the integrator key Secret report it the same way', async () => {
    const ref = { namespace: 'amsync', name: 'amsync-tokens' };
    const sink = new KubeSecretSink({ ref, api: () => kubeSecretApi(ref) });
    const sinkError = await sink.write('deploy', { reveal: () => 'x' } as never).then(() => undefined, (e: unknown) => e);
    expect(sinkError).toBeDefined();
    expectNoToken(sinkError);
    const store = integratorKeySecretStore({ namespace: 'amsync', name: 'ik', key: 'integrator-key' });
    const keyError = await store.read().then(() => undefined, (e: unknown) => e);
    expect((keyError as Error).message).toContain('could not be loaded');
    expectNoToken(keyError);
  });
});
