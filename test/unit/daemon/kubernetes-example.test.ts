import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { parseListen } from '../../../src/daemon/index.js';
import { parseDesired } from '../../../src/desired/index.js';

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
const hasKubectl = spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0;

/** The pod's amsync container, wherever it is (a native sidecar is an init container). */
const amsyncOf = (pod: Doc): Doc => [...(pod.spec.initContainers ?? []), ...pod.spec.containers].find((c: Doc) => c.name === 'amsync');

const nativeDeployment = async (): Promise<Doc> => (await docs('deployment.yaml'))[0];

/** The deployment as examples/kubernetes-pre-1.29 patches it (the JSON patch of its kustomization). */
async function plainDeployment(): Promise<Doc> {
  const [k] = parseAllDocuments(await readFile(new URL('../kubernetes-pre-1.29/kustomization.yaml', dir), 'utf8')).map((d) => d.toJS() as Doc);
  expect(k.resources).toEqual(['../kubernetes']);
  const [patch] = k.patches as Doc[];
  expect(patch.target).toEqual({ kind: 'Deployment', name: 'billing-app' });
  return applyJsonPatch(await nativeDeployment(), parse(patch.patch) as JsonPatchOp[]);
}

/** What the daemon needs of its container and pod, in either variant. */
function checkSidecar(pod: Doc): void {
  expect(pod.metadata.annotations).toMatchObject({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9477', 'prometheus.io/path': '/metrics' });
  const amsync = amsyncOf(pod);
  const args = amsync.args as string[];
  expect(args[0]).toBe('daemon');
  expect(args[args.indexOf('--listen') + 1]).toBe('0.0.0.0:9477');
  expect(parseListen(args[args.indexOf('--listen') + 1]!)).toEqual({ host: '0.0.0.0', port: 9477 });
  expect(amsync.livenessProbe.httpGet.path).toBe('/healthz');
  expect(amsync.readinessProbe.httpGet.path).toBe('/readyz');
  expect(amsync.securityContext).toMatchObject({ readOnlyRootFilesystem: true, runAsNonRoot: true, allowPrivilegeEscalation: false });
  expect(pod.spec.securityContext.runAsNonRoot).toBe(true);
  const env = Object.fromEntries((amsync.env as Doc[]).map((e) => [e.name, e.value ?? e.valueFrom]));
  // The integrator key in the Secret (a rotated one is written back to it), never an access token too.
  expect(env.AMSYNC_INTEGRATOR_KEY_SECRET).toBe('$(POD_NAMESPACE)/billing-app-amsync/integrator-key');
  expect(env.POD_NAMESPACE).toEqual({ fieldRef: { fieldPath: 'metadata.namespace' } });
  expect(env.AMSYNC_REFRESH_TOKEN_FILE).toBeUndefined();
  expect(env.AMSYNC_TOKEN_FILE).toBeUndefined();
  expect(env.AMSYNC_TOKEN).toBeUndefined();
  // More time than the daemon's default shutdown grace (30 s).
  expect(pod.spec.terminationGracePeriodSeconds).toBeGreaterThan(30);
  // The ConfigMap is mounted as a directory: a subPath mount would never be updated.
  const mounts = amsync.volumeMounts as Doc[];
  expect(mounts.every((m) => m.subPath === undefined)).toBe(true);
  const configMount = mounts.find((m) => m.name === 'access');
  expect(`${configMount.mountPath}/access.yaml`).toBe(env.AMSYNC_FILE);
  // Every path amsync writes is a volume.
  for (const path of [env.AMSYNC_STATE_FILE, `${env.AMSYNC_TOKENS_DIR}/x`]) {
    expect(mounts.some((m) => String(path).startsWith(`${m.mountPath}/`) && !m.readOnly), path).toBe(true);
  }
  const volumes = Object.fromEntries((pod.spec.volumes as Doc[]).map((v) => [v.name, v]));
  expect(volumes.access.configMap.name).toBe('billing-app-access');
  expect(volumes['amsync-secret'].secret.secretName).toBe('billing-app-amsync');
  // r--r-----, however the YAML is read (0440 would be 440 to a YAML 1.2 reader, 288 to kubectl).
  expect(volumes['amsync-secret'].secret.defaultMode).toBe(0o440);
  expect(volumes['amsync-tokens'].emptyDir.medium).toBe('Memory');
  expect(volumes['amsync-state'].persistentVolumeClaim.claimName).toBe('billing-app-amsync-state');
}

interface JsonPatchOp {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

/**
 * RFC 6902's add, remove and move, enough for the overlay's patch (kustomize applies it where
 * kubectl is installed, and the test above compares the two). Works on a copy.
 */
function applyJsonPatch(doc: Doc, ops: readonly JsonPatchOp[]): Doc {
  const out = structuredClone(doc);
  const locate = (pointer: string): [Doc, string] => {
    const keys = pointer.split('/').slice(1).map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = keys.pop()!;
    let parent = out;
    for (const key of keys) parent = parent?.[key];
    if (parent === undefined || parent === null) throw new Error(`no parent for ${pointer}`);
    return [parent, last];
  };
  const remove = (pointer: string): unknown => {
    const [parent, key] = locate(pointer);
    if (!(key in parent)) throw new Error(`nothing at ${pointer}`);
    const value = parent[key];
    if (Array.isArray(parent)) parent.splice(Number(key), 1);
    else delete parent[key];
    return value;
  };
  const add = (pointer: string, value: unknown): void => {
    const [parent, key] = locate(pointer);
    if (Array.isArray(parent)) parent.splice(key === '-' ? parent.length : Number(key), 0, value);
    else parent[key] = value;
  };
  for (const op of ops) {
    if (op.op === 'remove') remove(op.path);
    else if (op.op === 'add') add(op.path, op.value);
    else if (op.op === 'move') add(op.path, remove(op.from!));
    else throw new Error(`unsupported JSON patch op ${op.op}`);
  }
  return out;
}

describe('examples/kubernetes', () => {
  it('the kustomization lists files that exist', async () => {
    const [k] = await docs('kustomization.yaml');
    for (const r of k.resources as string[]) expect((await docs(r)).length, r).toBeGreaterThan(0);
  });

  it('runs amsync as a native sidecar: an init container with restartPolicy Always that the app waits for', async () => {
    const pod = (await nativeDeployment()).spec.template;
    // amsync alone: no init container copies the integrator key any more (it is read from the Secret).
    expect((pod.spec.initContainers as Doc[]).map((c) => c.name)).toEqual(['amsync']);
    expect((pod.spec.containers as Doc[]).map((c) => c.name)).toEqual(['app']);
    const amsync = amsyncOf(pod);
    expect(amsync.restartPolicy).toBe('Always');
    // The app's containers start once the startup probe passes: after the first successful sync.
    expect(amsync.startupProbe.httpGet).toEqual({ path: '/readyz', port: 'amsync-http' });
    expect(amsync.startupProbe.periodSeconds * amsync.startupProbe.failureThreshold).toBeGreaterThanOrEqual(300);
    checkSidecar(pod);
  });

  it('runs amsync as a plain second container on clusters before 1.29 (examples/kubernetes-pre-1.29)', async () => {
    const pod = (await plainDeployment()).spec.template;
    expect(pod.spec.initContainers).toBeUndefined();
    expect((pod.spec.containers as Doc[]).map((c) => c.name)).toEqual(['app', 'amsync']);
    const amsync = amsyncOf(pod);
    expect(amsync.restartPolicy).toBeUndefined();
    expect(amsync.startupProbe).toBeUndefined();
    checkSidecar(pod);
    // Everything else is the native variant's, field for field.
    const native = amsyncOf((await nativeDeployment()).spec.template);
    const { restartPolicy: _r, startupProbe: _s, ...rest } = native;
    expect(amsync).toEqual(rest);
  });

  it('takes the integrator key from the Secret through the API server, as a service account that may get and update that one Secret only', async () => {
    const [deployment] = await docs('deployment.yaml');
    const [secret] = await docs('secret.yaml');
    const rbac = await docs('integrator-key-rbac.yaml');
    const pod = deployment.spec.template;
    const env = Object.fromEntries((amsyncOf(pod).env as Doc[]).map((e) => [e.name, e.value ?? e.valueFrom]));
    expect(env.AMSYNC_TOKEN).toBeUndefined();
    expect(env.AMSYNC_REFRESH_TOKEN).toBeUndefined();
    const [, name, key] = String(env.AMSYNC_INTEGRATOR_KEY_SECRET).split('/');
    expect(name).toBe(secret.metadata.name);
    expect(secret.stringData[key!]).toBeDefined();
    const account = rbac.find((d) => d.kind === 'ServiceAccount');
    const role = rbac.find((d) => d.kind === 'Role');
    const binding = rbac.find((d) => d.kind === 'RoleBinding');
    expect(pod.spec.serviceAccountName).toBe(account.metadata.name);
    expect(role.rules).toEqual([{ apiGroups: [''], resources: ['secrets'], resourceNames: [secret.metadata.name], verbs: ['get', 'update'] }]);
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role.metadata.name });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: account.metadata.name }]);
    const [k] = await docs('kustomization.yaml');
    expect(k.resources).toContain('integrator-key-rbac.yaml');
  });

  it.runIf(hasKubectl)('the pre-1.29 overlay renders with kustomize to what the test checks', async () => {
    const run = spawnSync('kubectl', ['kustomize', fileURLToPath(new URL('../kubernetes-pre-1.29', dir))], { encoding: 'utf8', timeout: 60_000 });
    expect(run.status, run.stderr).toBe(0);
    const rendered = parseAllDocuments(run.stdout).map((d) => d.toJS() as Doc);
    expect(rendered.find((d) => d.kind === 'Deployment')).toEqual(await plainDeployment());
    expect(rendered.map((d) => d.kind).sort()).toEqual(['ConfigMap', 'Deployment', 'PersistentVolumeClaim', 'Role', 'RoleBinding', 'Secret', 'ServiceAccount']);
  });

  it("the ConfigMap's access.yaml is a valid desired-state file whose secret files the Secret provides", async () => {
    const [cm] = await docs('configmap.yaml');
    const [secret] = await docs('secret.yaml');
    const [deployment] = await docs('deployment.yaml');
    const secretMount = amsyncOf(deployment.spec.template).volumeMounts.find((m: Doc) => m.name === 'amsync-secret').mountPath as string;
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
