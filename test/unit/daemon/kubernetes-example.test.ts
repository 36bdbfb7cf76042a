import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { parseListen } from '../../../src/daemon/index.js';
import { parseDesired } from '../../../src/spec/index.js';

/** examples/kubernetes/ is documentation users copy: keep it true to what the daemon needs. */

const dir = new URL('../../../examples/kubernetes/', import.meta.url);
const read = async (name: string) => readFile(new URL(name, dir), 'utf8');
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Doc = any;
const docs = async (name: string): Promise<Doc[]> => {
  const parsed = parseAllDocuments(await read(name));
  for (const d of parsed) expect(d.errors, name).toEqual([]);
  return parsed.map((d) => d.toJS() as Doc);
};

describe('examples/kubernetes', () => {
  it('the kustomization lists files that exist', async () => {
    const [k] = await docs('kustomization.yaml');
    for (const r of k.resources as string[]) expect((await docs(r)).length, r).toBeGreaterThan(0);
  });

  it('runs amsync as a sidecar with probes, scrape annotations, a non-root read-only container and the integrator key from a file', async () => {
    const [deployment] = await docs('deployment.yaml');
    const pod = deployment.spec.template;
    expect(pod.metadata.annotations).toMatchObject({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9477', 'prometheus.io/path': '/metrics' });
    const containers = pod.spec.containers as Doc[];
    expect(containers.map((c) => c.name)).toEqual(['app', 'amsync']);
    const amsync = containers.find((c) => c.name === 'amsync');
    const args = amsync.args as string[];
    expect(args[0]).toBe('daemon');
    expect(args[args.indexOf('--listen') + 1]).toBe('0.0.0.0:9477');
    expect(parseListen(args[args.indexOf('--listen') + 1]!)).toEqual({ host: '0.0.0.0', port: 9477 });
    expect(amsync.livenessProbe.httpGet.path).toBe('/healthz');
    expect(amsync.readinessProbe.httpGet.path).toBe('/readyz');
    expect(amsync.securityContext).toMatchObject({ readOnlyRootFilesystem: true, runAsNonRoot: true, allowPrivilegeEscalation: false });
    expect(pod.spec.securityContext.runAsNonRoot).toBe(true);
    const env = Object.fromEntries((amsync.env as Doc[]).map((e) => [e.name, e.value ?? e.valueFrom]));
    // The integrator key, never together with an access token.
    expect(env.AMSYNC_REFRESH_TOKEN_FILE).toBe('/var/lib/amsync/integrator-key');
    expect(env.AMSYNC_TOKEN).toBeUndefined();
    expect(env.AMSYNC_TOKEN_FILE).toBeUndefined();
    expect(env.AMSYNC_REFRESH_TOKEN).toBeUndefined();
    // More time than the daemon's default shutdown grace (30 s).
    expect(pod.spec.terminationGracePeriodSeconds).toBeGreaterThan(30);
    // The ConfigMap is mounted as a directory: a subPath mount would never be updated.
    const mounts = amsync.volumeMounts as Doc[];
    expect(mounts.every((m) => m.subPath === undefined)).toBe(true);
    const configMount = mounts.find((m) => m.name === 'access');
    expect(`${configMount.mountPath}/access.yaml`).toBe(env.AMSYNC_FILE);
    // Every path amsync writes is a volume.
    // The key file too: a rotated key is written back to it.
    for (const path of [env.AMSYNC_STATE_FILE, `${env.AMSYNC_TOKENS_DIR}/x`, env.AMSYNC_REFRESH_TOKEN_FILE]) {
      expect(mounts.some((m) => String(path).startsWith(`${m.mountPath}/`) && !m.readOnly), path).toBe(true);
    }
    const volumes = Object.fromEntries((pod.spec.volumes as Doc[]).map((v) => [v.name, v]));
    expect(volumes.access.configMap.name).toBe('billing-app-access');
    expect(volumes['amsync-secret'].secret.secretName).toBe('billing-app-amsync');
    expect(volumes['amsync-tokens'].emptyDir.medium).toBe('Memory');
    expect(volumes['amsync-state'].persistentVolumeClaim.claimName).toBe('billing-app-amsync-state');
  });

  it('mounts the integrator key from the Secret and copies it to a writable volume before amsync starts', async () => {
    const [deployment] = await docs('deployment.yaml');
    const [secret] = await docs('secret.yaml');
    const pod = deployment.spec.template.spec;
    const init = (pod.initContainers as Doc[]).find((c) => c.name === 'integrator-key');
    const amsync = (pod.containers as Doc[]).find((c) => c.name === 'amsync');
    const keyFile = (amsync.env as Doc[]).find((e) => e.name === 'AMSYNC_REFRESH_TOKEN_FILE').value as string;
    const script = (init.args as string[]).join('\n');
    const secretMount = (init.volumeMounts as Doc[]).find((m) => m.name === 'amsync-secret');
    const stateMount = (init.volumeMounts as Doc[]).find((m) => m.name === 'amsync-state');
    expect(secretMount.readOnly).toBe(true);
    expect(script).toContain(`src=${secretMount.mountPath}/integrator-key`);
    expect(secret.stringData['integrator-key']).toBeDefined();
    expect(script).toContain(`dst=${keyFile}`);
    expect(keyFile.startsWith(`${stateMount.mountPath}/`)).toBe(true);
    expect(script).toContain('umask 077');
    expect(init.securityContext).toMatchObject({ readOnlyRootFilesystem: true, runAsNonRoot: true, allowPrivilegeEscalation: false });
  });

  it("the ConfigMap's access.yaml is a valid desired-state file whose secret files the Secret provides", async () => {
    const [cm] = await docs('configmap.yaml');
    const [secret] = await docs('secret.yaml');
    const [deployment] = await docs('deployment.yaml');
    const secretMount = (deployment.spec.template.spec.containers as Doc[]).find((c) => c.name === 'amsync').volumeMounts.find((m: Doc) => m.name === 'amsync-secret').mountPath as string;
    const read: string[] = [];
    const result = parseDesired(cm.data['access.yaml'], {
      file: 'access.yaml',
      env: {},
      secrets: 'require',
      readSecretFile: (path) => {
        read.push(path);
        const key = path.startsWith(`${secretMount}/`) ? path.slice(secretMount.length + 1) : undefined;
        return key !== undefined && key in secret.stringData ? 'x' : new Error('no such file');
      },
    });
    expect(result.errors).toEqual([]);
    expect(read).toEqual([`${secretMount}/deploy-password`]);
  });
});
