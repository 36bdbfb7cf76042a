import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { buildProgram } from '../../../src/cli/main.js';
import { processIo } from '../../../src/cli/io.js';
import { parseListen } from '../../../src/daemon/index.js';
import { parseDesired } from '../../../src/desired/index.js';
import { parseTargets, resolveShard, shardLease } from '../../../src/fleet/index.js';
import { parseLeaseRef } from '../../../src/settings/index.js';

/** examples/kubernetes/fleet/ is documentation users copy: keep it true to what the fleet daemon needs. */

const dir = new URL('../../../examples/kubernetes/fleet/', import.meta.url);
const read = async (name: string) => readFile(new URL(name, dir), 'utf8');
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Doc = any;
const docs = async (name: string): Promise<Doc[]> => {
  const parsed = parseAllDocuments(await read(name));
  for (const d of parsed) expect(d.errors, name).toEqual([]);
  return parsed.map((d) => d.toJS() as Doc);
};
const kind = async (file: string, k: string): Promise<Doc> => (await docs(file)).find((d) => d.kind === k);
const hasKubectl = spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0;

describe('examples/kubernetes/fleet', () => {
  it('the kustomization lists files that exist, and makes one ConfigMap of targets.yaml and access.yaml, updated in place', async () => {
    const [k] = await docs('kustomization.yaml');
    for (const r of k.resources as string[]) expect((await docs(r)).length, r).toBeGreaterThan(0);
    expect(k.configMapGenerator).toEqual([{ name: 'amsync-fleet-files', files: ['targets.yaml', 'access.yaml'] }]);
    // A hash suffix would roll the pods on every edit instead of letting the daemon see it.
    expect(k.generatorOptions.disableNameSuffixHash).toBe(true);
  });

  it('targets.yaml and access.yaml are valid together', async () => {
    const targets = parseTargets(await read('targets.yaml'), { file: 'targets.yaml', env: {}, baseDir: '/etc/amsync', checkFile: () => true, secrets: 'warn' });
    expect(targets.errors).toEqual([]);
    const desired = parseDesired(await read('access.yaml'), { file: 'access.yaml', env: {}, readSecretFile: () => 'x', targets: targets.value! });
    expect(desired.errors).toEqual([]);
    expect(desired.warnings).toEqual([]);
  });

  it('a StatefulSet whose replicas are the shards, each guarded by its own Lease the Role allows', async () => {
    const sts = await kind('statefulset.yaml', 'StatefulSet');
    const pod = sts.spec.template;
    const amsync = (pod.spec.containers as Doc[]).find((c) => c.name === 'amsync');
    const args = amsync.args as string[];
    const arg = (flag: string) => args[args.indexOf(flag) + 1]!;
    // The command line parses as the daemon's.
    const program = await buildProgram(processIo(), { setExitCode: () => undefined });
    const daemon = program.commands.find((c) => c.name() === 'daemon')!;
    daemon.action(() => undefined);
    await program.parseAsync(['node', 'amsync', ...args]);
    expect(daemon.opts()).toMatchObject({ targets: '/etc/amsync/targets.yaml', file: ['/etc/amsync/access.yaml'], shards: 3 });
    expect(Number(arg('--shards'))).toBe(sts.spec.replicas);
    expect(parseListen(arg('--listen'))).toEqual({ host: '0.0.0.0', port: 9477 });
    // The pod's name is its identity and its shard.
    const env = Object.fromEntries((amsync.env as Doc[]).map((e) => [e.name, e.value ?? e.valueFrom]));
    expect(env.POD_NAME).toEqual({ fieldRef: { fieldPath: 'metadata.name' } });
    expect(resolveShard({ shards: sts.spec.replicas }, { POD_NAME: `${sts.metadata.name}-2` })).toEqual({ index: 2, count: 3 });
    // One Lease per shard, in the kustomization's namespace, each one the Role names.
    const [k] = await docs('kustomization.yaml');
    const ref = parseLeaseRef(arg('--leader-elect'))!;
    expect(ref.namespace).toBe(k.namespace);
    const role = await kind('rbac.yaml', 'Role');
    const names = Array.from({ length: sts.spec.replicas as number }, (_, index) => shardLease(ref, { index, count: sts.spec.replicas }).name);
    expect(role.rules[0]).toMatchObject({ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'update'] });
    expect(role.rules[0].resourceNames).toEqual(names);
    expect(role.rules[1].verbs).toEqual(['create']);
    expect(pod.spec.serviceAccountName).toBe((await kind('rbac.yaml', 'ServiceAccount')).metadata.name);
    expect((await kind('rbac.yaml', 'RoleBinding')).subjects[0].name).toBe(pod.spec.serviceAccountName);
    // Probes, grace, and the files mounted as a directory (updates show up).
    expect(amsync.readinessProbe.httpGet.path).toBe('/readyz');
    expect(amsync.livenessProbe.httpGet.path).toBe('/healthz');
    expect(pod.spec.terminationGracePeriodSeconds).toBeGreaterThan(30);
    const mounts = amsync.volumeMounts as Doc[];
    expect(mounts.every((m) => m.subPath === undefined)).toBe(true);
    expect(mounts.find((m) => m.name === 'files').mountPath).toBe('/etc/amsync');
    expect((pod.spec.volumes as Doc[]).find((v) => v.name === 'files').configMap.name).toBe('amsync-fleet-files');
    // State files (one per target beside this one) and rotated keys on the pod's own volume.
    expect(String(env.AMSYNC_STATE_FILE)).toMatch(/^\/var\/lib\/amsync\//);
    expect(mounts.find((m) => m.name === 'state').mountPath).toBe('/var/lib/amsync');
    expect(sts.spec.volumeClaimTemplates[0].metadata.name).toBe('state');
    expect(amsync.securityContext).toMatchObject({ readOnlyRootFilesystem: true, runAsNonRoot: true, allowPrivilegeEscalation: false });
  });

  it('a PodDisruptionBudget lets one replica go at a time', async () => {
    const pdb = await kind('pdb.yaml', 'PodDisruptionBudget');
    const sts = await kind('statefulset.yaml', 'StatefulSet');
    expect(pdb.spec.maxUnavailable).toBe(1);
    expect(pdb.spec.selector.matchLabels).toEqual(sts.spec.selector.matchLabels);
  });

  it.skipIf(!hasKubectl)('kustomize builds it', () => {
    const built = spawnSync('kubectl', ['kustomize', dir.pathname], { encoding: 'utf8' });
    expect(built.status, built.stderr).toBe(0);
    expect(built.stdout).toContain('kind: StatefulSet');
  });
});
