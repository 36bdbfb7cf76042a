import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { AddressInfo } from 'node:net';

/** The RBAC verbs the fake checks, one per call the sink makes. */
export type SecretVerbName = 'get' | 'create' | 'update';

interface StoredSecret {
  metadata: Record<string, unknown> & { resourceVersion: string };
  type?: string;
  data: Record<string, string>;
}

/**
 * The part of the Kubernetes API server the Secret sink uses, for one namespace, with the rules
 * that matter: a PUT whose resourceVersion is not the current one is 409 Conflict (and a POST
 * of an existing Secret too), a GET or PUT of a missing Secret is 404, a verb the service
 * account was not granted is 403 (worded as the API server words it), and a data key that is
 * not `[-._a-zA-Z0-9]+` or a value that is not base64 is 422. Like test/helpers/fake-lease-api.ts.
 */
export class SecretBackend {
  readonly secrets = new Map<string, StoredSecret>();
  /** The verbs allowed; all three unless a test takes one away. */
  readonly allowed = new Set<SecretVerbName>(['get', 'create', 'update']);
  /** Every call, as `VERB /path`, in order. */
  readonly requests: string[] = [];
  /** The resourceVersion each PUT carried (undefined: an unconditional update). */
  readonly putVersions: (string | undefined)[] = [];
  /** Runs once, when the next PUT arrives and before it is checked: another writer, in between amsync's read and write. */
  beforeNextPut: ((backend: SecretBackend) => void) | undefined;
  #version = 100;

  constructor(readonly namespace = 'amsync') {}

  /** Another writer changes the Secret (a new resourceVersion), as `kubectl edit` would. */
  touch(name: string, key: string, value: string): void {
    const secret = this.secrets.get(name);
    if (!secret) throw new Error(`no Secret ${name}`);
    secret.data[key] = Buffer.from(value).toString('base64');
    secret.metadata.resourceVersion = this.#next();
  }

  /** A data key's value, decoded; undefined when absent. */
  value(name: string, key: string): string | undefined {
    const raw = this.secrets.get(name)?.data[key];
    return raw === undefined ? undefined : Buffer.from(raw, 'base64').toString('utf8');
  }

  #next(): string {
    this.#version += 1;
    return String(this.#version);
  }

  /** One request: [status, body]. */
  handle(method: string, path: string, body: string): [number, unknown] {
    const base = `/api/v1/namespaces/${this.namespace}/secrets`;
    const named = path.startsWith(`${base}/`) ? decodeURIComponent(path.slice(base.length + 1)) : undefined;
    const forbidden = (verb: SecretVerbName, name: string | undefined): [number, unknown] => [
      403,
      status(403, 'Forbidden', `secrets${name ? ` "${name}"` : ''} is forbidden: User "system:serviceaccount:amsync:amsync" cannot ${verb} resource "secrets" in API group "" in the namespace "${this.namespace}"`),
    ];
    if (method === 'GET' && named !== undefined) {
      if (!this.allowed.has('get')) return forbidden('get', named);
      const secret = this.secrets.get(named);
      return secret ? [200, this.#out(secret)] : [404, status(404, 'NotFound', `secrets "${named}" not found`)];
    }
    if (method === 'POST' && path === base) {
      const input = JSON.parse(body) as Partial<StoredSecret>;
      const name = String(input.metadata?.name ?? '');
      if (!this.allowed.has('create')) return forbidden('create', undefined);
      if (this.secrets.has(name)) return [409, status(409, 'AlreadyExists', `secrets "${name}" already exists`)];
      const invalid = invalidData(input.data);
      if (invalid) return [422, status(422, 'Invalid', invalid)];
      const stored: StoredSecret = { metadata: { ...input.metadata, name, namespace: this.namespace, resourceVersion: this.#next() }, type: input.type ?? 'Opaque', data: { ...input.data } };
      this.secrets.set(name, stored);
      return [201, this.#out(stored)];
    }
    if (method === 'PUT' && named !== undefined) {
      const hook = this.beforeNextPut;
      this.beforeNextPut = undefined;
      hook?.(this);
      if (!this.allowed.has('update')) return forbidden('update', named);
      const input = JSON.parse(body) as Partial<StoredSecret>;
      const version = input.metadata?.resourceVersion as string | undefined;
      this.putVersions.push(version);
      const secret = this.secrets.get(named);
      if (!secret) return [404, status(404, 'NotFound', `secrets "${named}" not found`)];
      if (version !== undefined && version !== secret.metadata.resourceVersion) {
        return [409, status(409, 'Conflict', `Operation cannot be fulfilled on secrets "${named}": the object has been modified; please apply your changes to the latest version and try again`)];
      }
      const invalid = invalidData(input.data);
      if (invalid) return [422, status(422, 'Invalid', invalid)];
      const stored: StoredSecret = { metadata: { ...input.metadata, name: named, namespace: this.namespace, resourceVersion: this.#next() }, type: secret.type, data: { ...input.data } };
      this.secrets.set(named, stored);
      return [200, this.#out(stored)];
    }
    return [404, status(404, 'NotFound', 'the server could not find the requested resource')];
  }

  #out(secret: StoredSecret): unknown {
    return { apiVersion: 'v1', kind: 'Secret', metadata: { ...secret.metadata }, type: secret.type, data: { ...secret.data } };
  }
}

function status(code: number, reason: string, message: string): unknown {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

/** As the API server validates a Secret's data: keys `[-._a-zA-Z0-9]+` (not `.`, `..`, nor starting `..`), values base64. */
function invalidData(data: Record<string, string> | undefined): string | undefined {
  for (const [key, value] of Object.entries(data ?? {})) {
    if (!/^[-._a-zA-Z0-9]+$/.test(key) || key.length > 253 || key === '.' || key.startsWith('..')) return `data[${key}]: Invalid value: a valid config key must consist of alphanumeric characters, '-', '_' or '.'`;
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value) || value.length % 4 !== 0) return `data[${key}]: Invalid value: illegal base64 data`;
  }
  return undefined;
}

/** The backend behind real HTTP on 127.0.0.1, for @kubernetes/client-node. */
export async function startSecretApi(backend: SecretBackend): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0] ?? '';
      backend.requests.push(`${req.method} ${path}`);
      const [code, value] = backend.handle(req.method ?? 'GET', path, body);
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A kubeconfig, as kubectl reads it, pointing at the fake. */
export function kubeconfigFor(url: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    `clusters: [{name: fake, cluster: {server: "${url}", insecure-skip-tls-verify: true}}]`,
    'users: [{name: fake, user: {token: fake}}]',
    'contexts: [{name: fake, context: {cluster: fake, user: fake}}]',
    'current-context: fake',
    '',
  ].join('\n');
}

/**
 * For one test file: a temporary folder, a fake API server over a fresh backend for `namespace`,
 * and a kubeconfig for it in the folder that KUBECONFIG names while the file runs (the client
 * library reads it from this process, as kubectl would); all undone after. Call it before the
 * file's own hooks: `ready` gets the backend and the folder once they exist.
 */
export function secretApiPerFile(prefix: string, ready: (backend: SecretBackend, dir: string) => void, namespace = 'amsync'): void {
  const kubeconfigBefore = process.env.KUBECONFIG;
  let api: { close(): Promise<void> } | undefined;
  let dir: string | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), prefix));
    const backend = new SecretBackend(namespace);
    const started = await startSecretApi(backend);
    api = started;
    await writeFile(join(dir, 'kubeconfig'), kubeconfigFor(started.url));
    process.env.KUBECONFIG = join(dir, 'kubeconfig');
    ready(backend, dir);
  });
  afterAll(async () => {
    if (kubeconfigBefore === undefined) delete process.env.KUBECONFIG;
    else process.env.KUBECONFIG = kubeconfigBefore;
    await api?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });
}
