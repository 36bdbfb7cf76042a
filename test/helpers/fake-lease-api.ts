import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LeaseConflictError, type LeaseRecord, type LeaseStore } from '../../src/daemon/lease-elector.js';

/** One write the fake accepted: who held the Lease from then on. */
export interface HolderChange {
  readonly seq: number;
  readonly holder: string;
}

/**
 * The part of the Kubernetes API server leader election uses, with its one rule that
 * matters: an update whose resourceVersion is not the current one is refused with 409, and
 * a create of an existing Lease too. It records every accepted write's holder.
 */
export class LeaseBackend {
  lease: (LeaseRecord & { resourceVersion: string }) | undefined;
  readonly history: HolderChange[] = [];
  #version = 0;
  /** Identities whose calls fail as if the network to the API server were cut. */
  readonly partitioned = new Set<string>();

  create(record: LeaseRecord): LeaseRecord {
    if (this.lease) throw new LeaseConflictError('already exists');
    return this.#store(record);
  }

  update(record: LeaseRecord): LeaseRecord {
    if (!this.lease) throw Object.assign(new Error('not found'), { status: 404 });
    if (record.resourceVersion !== undefined && record.resourceVersion !== this.lease.resourceVersion) throw new LeaseConflictError();
    return this.#store(record);
  }

  #store(record: LeaseRecord): LeaseRecord {
    this.#version += 1;
    this.lease = { ...record, resourceVersion: String(this.#version) };
    this.history.push({ seq: this.#version, holder: record.holderIdentity ?? '' });
    return this.lease;
  }

  /** A LeaseStore for one replica, over this backend (in-process). */
  storeFor(identity: string): LeaseStore {
    const cut = () => {
      if (this.partitioned.has(identity)) throw new Error(`connect ECONNREFUSED (partitioned: ${identity})`);
    };
    return {
      describe: 'lease:amsync/test',
      get: async () => {
        cut();
        return this.lease && { ...this.lease };
      },
      create: async (r) => {
        cut();
        return this.create(r);
      },
      update: async (r) => {
        cut();
        return this.update(r);
      },
    };
  }
}

/**
 * The same backend behind real HTTP, shaped as the API server answers
 * /apis/coordination.k8s.io/v1/namespaces/NS/leases[/NAME], for @kubernetes/client-node.
 */
export async function startLeaseApi(backend: LeaseBackend, namespace = 'amsync', name = 'test'): Promise<{ url: string; close(): Promise<void>; requests: string[] }> {
  const requests: string[] = [];
  const base = `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      requests.push(`${req.method} ${req.url}`);
      const send = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      const status = (code: number, reason: string) => send(code, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, code });
      const path = (req.url ?? '').split('?')[0];
      try {
        if (req.method === 'GET' && path === `${base}/${name}`) return backend.lease ? send(200, toLease(backend.lease, namespace, name)) : status(404, 'NotFound');
        if (req.method === 'POST' && path === base) return send(201, toLease(backend.create(fromLease(JSON.parse(body))), namespace, name));
        if (req.method === 'PUT' && path === `${base}/${name}`) return send(200, toLease(backend.update(fromLease(JSON.parse(body))), namespace, name));
        return status(404, 'NotFound');
      } catch (error) {
        if (error instanceof LeaseConflictError) return status(409, 'Conflict');
        return status((error as { status?: number }).status ?? 500, 'InternalError');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function toLease(r: LeaseRecord & { resourceVersion?: string }, namespace: string, name: string): unknown {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace, resourceVersion: r.resourceVersion },
    spec: {
      holderIdentity: r.holderIdentity,
      leaseDurationSeconds: r.leaseDurationSeconds,
      acquireTime: r.acquireTime?.toISOString(),
      renewTime: r.renewTime?.toISOString(),
      leaseTransitions: r.leaseTransitions,
    },
  };
}

function fromLease(lease: { metadata?: { resourceVersion?: string }; spec?: Record<string, unknown> }): LeaseRecord {
  const spec = lease.spec ?? {};
  const date = (v: unknown) => (typeof v === 'string' ? new Date(v) : undefined);
  return {
    holderIdentity: spec.holderIdentity as string | undefined,
    leaseDurationSeconds: spec.leaseDurationSeconds as number | undefined,
    acquireTime: date(spec.acquireTime),
    renewTime: date(spec.renewTime),
    leaseTransitions: spec.leaseTransitions as number | undefined,
    resourceVersion: lease.metadata?.resourceVersion,
  };
}
