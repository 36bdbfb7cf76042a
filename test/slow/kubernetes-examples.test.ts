import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, posix, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { runInProcess } from '../helpers/in-process.js';
import { root } from '../helpers/paths.js';

/**
 * Every example under examples/ works as shipped (issue 31): each kustomization renders
 * (`kubectl kustomize` where it is installed, else its resources and generators read here),
 * every Kubernetes object in it — and in the loose manifests beside it — is valid against the
 * Kubernetes API schemas (kubernetes-models), every path an amsync container is given (its
 * arguments, its environment, and the files the desired and targets files it reads reference)
 * is on a volume the container mounts, with the key a ConfigMap or Secret volume must hold;
 * and `amsync validate` passes on every amsync file of examples/.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = any;

const examples = join(root, 'examples');
const hasKubectl = spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0;

/** Folders under examples/ holding a kustomization.yaml. */
function kustomizations(dir = examples): string[] {
  const here = existsSync(join(dir, 'kustomization.yaml')) ? [dir] : [];
  const below = readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory());
  return [...here, ...below.flatMap((e) => kustomizations(join(dir, e.name)))];
}

function yamlDocs(text: string, where: string): Obj[] {
  const docs = parseAllDocuments(text);
  for (const d of docs) expect(d.errors.map((e) => e.message), where).toEqual([]);
  return docs.map((d) => d.toJS() as Obj).filter((d) => d !== null && d !== undefined);
}

/** `kubectl kustomize DIR`, or the same read here: resources (files and folders), generators, the namespace. Patches are kubectl's only. */
function render(dir: string): Obj[] {
  if (hasKubectl) {
    const built = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
    expect(built.status, built.stderr).toBe(0);
    return yamlDocs(built.stdout, `kubectl kustomize ${relative(root, dir)}`);
  }
  return renderHere(dir);
}

function renderHere(dir: string): Obj[] {
  const k = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as Obj;
  const out: Obj[] = [];
  for (const r of (k.resources ?? []) as string[]) {
    const path = join(dir, r);
    out.push(...(statSync(path).isDirectory() ? renderHere(path) : yamlDocs(readFileSync(path, 'utf8'), r)));
  }
  for (const g of (k.configMapGenerator ?? []) as Obj[]) {
    const data = Object.fromEntries(
      ((g.files ?? []) as string[]).map((f) => {
        const [key, file = key] = f.includes('=') ? f.split('=') : [posix.basename(f), f];
        return [key, readFileSync(join(dir, file!), 'utf8')];
      }),
    );
    out.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: g.name }, data });
  }
  return out.map((o) => (k.namespace === undefined ? o : { ...o, metadata: { ...o.metadata, namespace: k.namespace } }));
}

/** The kubernetes-models class of an object (the Prometheus Operator's from its own package). */
async function model(apiVersion: string, kind: string): Promise<new (o: Obj) => { validate(): void }> {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const pkg = group === 'monitoring.coreos.com' ? '@kubernetes-models/prometheus-operator/monitoring.coreos.com' : group === '' ? 'kubernetes-models' : `kubernetes-models/${group}`;
  const spec = `${pkg}/${version}/${kind}`;
  const mod = (await import(/* @vite-ignore */ spec)) as Record<string, new (o: Obj) => { validate(): void }>;
  return mod[kind]!;
}

/** Validates one object against its API schema; the message names it and what is wrong. */
async function validateObject(o: Obj, where: string): Promise<void> {
  const Model = await model(o.apiVersion, o.kind);
  expect(Model, `${where}: ${o.apiVersion} ${o.kind} is not a Kubernetes kind`).toBeDefined();
  try {
    new Model(o).validate();
  } catch (error) {
    throw new Error(`${where}: ${o.kind} ${o.metadata?.name}: ${(error as Error).message}`);
  }
}

interface Found {
  /** The volume's source: a ConfigMap's or Secret's data (by key), or another kind (files made at run time). */
  readonly data?: Readonly<Record<string, string>>;
  readonly volume: string;
}

/** The pod spec of a workload (with a StatefulSet's volumeClaimTemplates). */
function podSpec(o: Obj): Obj | undefined {
  if (o.kind === 'Pod') return o.spec;
  if (o.kind === 'StatefulSet') return { ...o.spec.template.spec, volumeClaimTemplates: o.spec.volumeClaimTemplates ?? [] };
  if (['Deployment', 'DaemonSet', 'ReplicaSet', 'Job'].includes(o.kind)) return o.spec.template.spec;
  if (o.kind === 'CronJob') return o.spec.jobTemplate.spec.template.spec;
  return undefined;
}

/**
 * Where `path` is in the container: on which of its mounts (the deepest that holds it), and,
 * for a ConfigMap or Secret volume, whether the file is one of its keys. Undefined: not mounted.
 */
function locate(path: string, container: Obj, pod: Obj, objects: Obj[]): (Found & { file?: string; missing?: string }) | undefined {
  const mounts = ((container.volumeMounts ?? []) as Obj[]).filter((m) => path === m.mountPath || path.startsWith(`${String(m.mountPath).replace(/\/$/, '')}/`));
  const mount = mounts.sort((a, b) => b.mountPath.length - a.mountPath.length)[0];
  if (!mount) return undefined;
  // A StatefulSet's volumeClaimTemplates are volumes of its pods too.
  const claims = ((pod.volumeClaimTemplates ?? []) as Obj[]).map((t) => ({ name: t.metadata.name, persistentVolumeClaim: { claimName: t.metadata.name } }));
  const volume = [...((pod.volumes ?? []) as Obj[]), ...claims].find((v) => v.name === mount.name);
  expect(volume, `volumeMount ${mount.name} has no volume`).toBeDefined();
  const rest = posix.relative(mount.mountPath, path);
  const keyed = (kind: 'ConfigMap' | 'Secret', name: string, items?: Obj[]) => {
    const source = objects.find((o) => o.kind === kind && o.metadata.name === name);
    expect(source, `volume ${volume.name}: no ${kind} ${name} in the example`).toBeDefined();
    const data: Record<string, string> = { ...source.data, ...source.stringData, ...source.binaryData };
    // With items, only those keys are there, at their paths.
    const files = items ? Object.fromEntries(items.map((i) => [i.path, data[i.key]!])) : data;
    if (rest === '') return { volume: volume.name, data: files };
    return rest in files ? { volume: volume.name, data: files, file: files[rest] } : { volume: volume.name, data: files, missing: `${kind} ${name} has no key ${rest} (it has ${Object.keys(files).join(', ')})` };
  };
  if (volume.configMap) return keyed('ConfigMap', volume.configMap.name, volume.configMap.items);
  if (volume.secret) return keyed('Secret', volume.secret.secretName, volume.secret.items);
  return { volume: volume.name };
}

/** The paths an amsync container is given: absolute arguments and environment values. */
function givenPaths(container: Obj): { path: string; how: string }[] {
  const args = ((container.args ?? []) as string[]).map((a, i, all) => ({ path: a, how: `args ${all[i - 1] ?? ''} ${a}`.trim() }));
  const env = ((container.env ?? []) as Obj[]).filter((e) => typeof e.value === 'string').map((e) => ({ path: e.value as string, how: `env ${e.name}` }));
  return [...args, ...env].filter((p) => p.path.startsWith('/'));
}

/** The container's desired and targets files, as its flags and environment name them. */
function amsyncFiles(container: Obj): { desired: string[]; targets?: string } {
  const args = (container.args ?? []) as string[];
  const env = Object.fromEntries(((container.env ?? []) as Obj[]).map((e) => [e.name, e.value]));
  const after = (flags: string[]) => args.flatMap((a, i) => (flags.includes(a) ? [args[i + 1]!] : []));
  const desired = after(['-f', '--file']);
  const targets = after(['--targets'])[0] ?? env.AMSYNC_TARGETS;
  return { desired: desired.length > 0 ? desired : env.AMSYNC_FILE ? [env.AMSYNC_FILE] : [], ...(targets ? { targets } : {}) };
}

/** Every `{ file: PATH }` in a document, and the targets' caFile (relative to the file's folder). */
function referencedFiles(doc: Obj, dir: string): { path: string; at: string }[] {
  const out: { path: string; at: string }[] = [];
  const walk = (v: Obj, at: string) => {
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${at}[${i}]`));
    else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        const here = at === '' ? k : `${at}.${k}`;
        if ((k === 'file' || k === 'caFile') && typeof x === 'string') out.push({ path: posix.resolve(dir, x), at: here });
        else walk(x, here);
      }
    }
  };
  walk(doc, '');
  return out;
}

/** Problems of one rendered example: paths of amsync containers that nothing mounts. */
function mountProblems(objects: Obj[]): string[] {
  const problems: string[] = [];
  for (const o of objects) {
    const pod = podSpec(o);
    if (!pod) continue;
    for (const c of [...((pod.initContainers ?? []) as Obj[]), ...((pod.containers ?? []) as Obj[])]) {
      // amsync itself (its entrypoint), not a shell in its image.
      if (!/amsync/.test(c.image) || c.command !== undefined) continue;
      const where = `${o.kind} ${o.metadata.name}, container ${c.name}`;
      const checked = new Map<string, ReturnType<typeof locate>>();
      const check = (path: string, how: string) => {
        if (checked.has(path)) return checked.get(path);
        const found = locate(path, c, pod, objects);
        checked.set(path, found);
        if (!found) problems.push(`${where}: ${how}: ${path} is on no volume the container mounts`);
        else if (found.missing) problems.push(`${where}: ${how}: ${path}: ${found.missing}`);
        return found;
      };
      for (const { path, how } of givenPaths(c)) check(path, how);
      // What the desired and targets files reference, read from the ConfigMap they are mounted from.
      const files = amsyncFiles(c);
      for (const file of [...files.desired, ...(files.targets ? [files.targets] : [])]) {
        const found = check(file, 'an amsync file');
        if (found?.file === undefined) continue;
        for (const ref of referencedFiles(parse(found.file), posix.dirname(file))) check(ref.path, `${file}: ${ref.at}`);
      }
      for (const e of (c.env ?? []) as Obj[]) {
        const ref = e.valueFrom?.secretKeyRef ?? e.valueFrom?.configMapKeyRef;
        if (!ref) continue;
        const kind = e.valueFrom.secretKeyRef ? 'Secret' : 'ConfigMap';
        const source = objects.find((x) => x.kind === kind && x.metadata.name === ref.name);
        if (!source || !(ref.key in { ...source.data, ...source.stringData })) problems.push(`${where}: env ${e.name}: ${kind} ${ref.name} with key ${ref.key} is not in the example`);
      }
    }
  }
  return problems;
}

/** The loose manifests beside a kustomization (documented to be applied by hand): every YAML file with a `kind`. */
function looseManifests(dir: string, listed: Set<string>): { file: string; docs: Obj[] }[] {
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml' && !listed.has(f))
    .map((f) => ({ file: join(dir, f), docs: yamlDocs(readFileSync(join(dir, f), 'utf8'), f).filter((d) => typeof d.kind === 'string' && typeof d.apiVersion === 'string') }))
    .filter((m) => m.docs.length > 0);
}

const folders = kustomizations();

describe('the Kubernetes examples', () => {
  it('are found', () => {
    expect(folders.map((f) => relative(examples, f)).sort()).toEqual(['kubernetes', 'kubernetes-pre-1.29', 'kubernetes/fleet']);
  });

  it.each(folders.map((f) => [relative(root, f), f]))('%s renders, and every object in it is valid against the Kubernetes API', async (_name, dir) => {
    const objects = render(dir);
    expect(objects.length).toBeGreaterThan(0);
    for (const o of objects) await validateObject(o, relative(root, dir));
  });

  it.each(folders.map((f) => [relative(root, f), f]))('%s: every path an amsync container is given, or its files reference, is mounted', (_name, dir) => {
    expect(mountProblems(render(dir))).toEqual([]);
  });

  it.each(folders.map((f) => [relative(root, f), f]))('%s: the manifests beside the kustomization are valid too', async (_name, dir) => {
    const k = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as Obj;
    for (const m of looseManifests(dir, new Set((k.resources ?? []) as string[]))) for (const o of m.docs) await validateObject(o, relative(root, m.file));
  });
});

describe('amsync validate on every amsync file of examples/', () => {
  let temp = '';
  beforeAll(async () => {
    temp = await mkdtemp(join(tmpdir(), 'amsync-examples-'));
  });
  afterAll(async () => {
    await rm(temp, { recursive: true, force: true });
  });

  /** Files that declare amsync's schema (`# yaml-language-server: $schema=…access.schema.json`), and the targets files. */
  function amsyncFilesIn(dir: string): { access: string[]; targets: string[] } {
    const out = { access: [] as string[], targets: [] as string[] };
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        const below = amsyncFilesIn(path);
        out.access.push(...below.access);
        out.targets.push(...below.targets);
      } else if (/\.ya?ml$/.test(e.name)) {
        const head = readFileSync(path, 'utf8').split('\n', 1)[0]!;
        if (/\$schema=.*access\.schema\.json/.test(head)) out.access.push(path);
        if (/\$schema=.*targets\.schema\.json/.test(head)) out.targets.push(path);
      }
    }
    return out;
  }

  const found = amsyncFilesIn(examples);

  it('finds them', () => {
    expect(found.access.map((f) => relative(root, f)).sort()).toEqual(['examples/access.yaml', 'examples/all-fields.yaml', 'examples/kubernetes/fleet/access.yaml', 'examples/minimal.yaml']);
    expect(found.targets.map((f) => relative(root, f))).toEqual(['examples/kubernetes/fleet/targets.yaml']);
  });

  it.each(found.access.map((f) => [relative(root, f), f]))('%s is valid (with the targets file beside it)', async (name, file) => {
    const targets = join(dirname(file), 'targets.yaml');
    const args = ['validate', '-f', name!, ...(found.targets.includes(targets) ? ['--targets', relative(root, targets)] : [])];
    const run = await runInProcess(args, { env: {} });
    expect(run.code, `amsync ${args.join(' ')}\n${run.stderr}`).toBe(0);
  });

  it('the desired files a ConfigMap of an example holds are valid', async () => {
    // Those a configMapGenerator makes of a file above are checked as that file, with its targets file.
    const asFiles = new Set(found.access.map((f) => readFileSync(f, 'utf8')));
    const embedded = folders.flatMap((dir) => render(dir).filter((o) => o.kind === 'ConfigMap').flatMap((o) => Object.entries((o.data ?? {}) as Record<string, string>).filter(([, text]) => /\$schema=.*access\.schema\.json/.test(text) && !asFiles.has(text)).map(([key, text]) => ({ name: `${relative(root, dir)}: ConfigMap ${o.metadata.name} ${key}`, text }))));
    expect(embedded.length).toBeGreaterThan(0);
    for (const [i, e] of embedded.entries()) {
      const file = join(temp, `embedded-${i}.yaml`);
      await writeFile(file, e.text);
      const run = await runInProcess(['validate', '-f', file], { env: {} });
      expect(run.code, `${e.name}\n${run.stderr}`).toBe(0);
    }
  });

  it("the fleet's CA file and the ConfigMap it is mounted from hold the same certificate", () => {
    const pem = readFileSync(join(examples, 'kubernetes/fleet/ca/rj-internal.pem'), 'utf8');
    const cm = yamlDocs(readFileSync(join(examples, 'kubernetes/fleet/ca.yaml'), 'utf8'), 'ca.yaml')[0];
    const certs = (text: string) => text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g);
    expect(certs(cm.data['rj-internal.pem'])).toEqual(certs(pem));
  });
});

describe('the checks themselves', () => {
  const pod = (container: Obj, volumes: Obj[]): Obj => ({ kind: 'Deployment', metadata: { name: 'd' }, spec: { template: { spec: { containers: [container], volumes } } } });
  const cm = (name: string, data: Record<string, string>) => ({ kind: 'ConfigMap', metadata: { name }, data });

  it('a path on no mount, a key a ConfigMap lacks, and a file a targets file references that is not mounted are found', () => {
    const targets = 'targets:\n  - name: a\n    url: https://a.example.com\n    token: { file: /run/t }\n    caFile: ca/a.pem\n';
    const container = { name: 'amsync', image: 'amsync:1', args: ['daemon', '--targets', '/etc/amsync/targets.yaml', '--file', '/etc/amsync/access.yaml'], env: [{ name: 'AMSYNC_STATE_FILE', value: '/var/lib/amsync/state.json' }], volumeMounts: [{ name: 'files', mountPath: '/etc/amsync' }] };
    const problems = mountProblems([pod(container, [{ name: 'files', configMap: { name: 'f' } }]), cm('f', { 'targets.yaml': targets })]);
    expect(problems).toEqual([
      'Deployment d, container amsync: args --file /etc/amsync/access.yaml: /etc/amsync/access.yaml: ConfigMap f has no key access.yaml (it has targets.yaml)',
      'Deployment d, container amsync: env AMSYNC_STATE_FILE: /var/lib/amsync/state.json is on no volume the container mounts',
      'Deployment d, container amsync: /etc/amsync/targets.yaml: targets[0].token.file: /run/t is on no volume the container mounts',
      'Deployment d, container amsync: /etc/amsync/targets.yaml: targets[0].caFile: /etc/amsync/ca/a.pem: ConfigMap f has no key ca/a.pem (it has targets.yaml)',
    ]);
  });

  it('an object the API would refuse is refused', async () => {
    const bad = { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'x' }, spec: { replicas: 'three', serviceName: 'x', selector: {}, template: { spec: { containers: [{ image: 'x' }] } } } };
    await expect(validateObject(bad, 'test')).rejects.toThrow(/StatefulSet x: .*replicas must be integer.*must have required property name/);
  });
});
