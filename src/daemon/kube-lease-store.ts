import type { V1Lease } from '@kubernetes/client-node';
import { loadKubeConfig, type KubeServer } from '../kube/index.js';
import type { LeaseRef } from '../settings/index.js';
import { LeaseConflictError, type LeaseRecord, type LeaseStore } from './lease-elector.js';

export interface KubeLeaseStoreOptions {
  readonly ref: LeaseRef;
  /**
   * Where the API server is. Default: the pod's service account (in a cluster), else
   * ~/.kube/config, as kubectl finds it.
   */
  readonly server?: KubeServer;
}

/**
 * The Lease through @kubernetes/client-node's CoordinationV1Api, loaded only when leader
 * election is on (the library is large). A 409 from the API server is a LeaseConflictError.
 */
export async function kubeLeaseStore(options: KubeLeaseStoreOptions): Promise<LeaseStore> {
  const { k8s, config } = await loadKubeConfig(options.server);
  const api = config.makeApiClient(k8s.CoordinationV1Api);
  const { namespace, name } = options.ref;
  const toRecord = (lease: V1Lease): LeaseRecord => ({
    holderIdentity: lease.spec?.holderIdentity,
    leaseDurationSeconds: lease.spec?.leaseDurationSeconds,
    acquireTime: asDate(lease.spec?.acquireTime),
    renewTime: asDate(lease.spec?.renewTime),
    leaseTransitions: lease.spec?.leaseTransitions,
    resourceVersion: lease.metadata?.resourceVersion,
  });
  const toLease = (r: LeaseRecord): V1Lease => ({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace, ...(r.resourceVersion ? { resourceVersion: r.resourceVersion } : {}) },
    spec: {
      holderIdentity: r.holderIdentity,
      leaseDurationSeconds: r.leaseDurationSeconds,
      acquireTime: r.acquireTime,
      renewTime: r.renewTime,
      leaseTransitions: r.leaseTransitions,
    },
  });
  const status = (error: unknown): number | undefined => (error instanceof k8s.ApiException ? error.code : undefined);
  const conflicts = async <T>(call: Promise<T>): Promise<T> => {
    try {
      return await call;
    } catch (error) {
      if (status(error) === 409) throw new LeaseConflictError();
      throw error;
    }
  };
  return {
    describe: `lease:${namespace}/${name}`,
    async get() {
      try {
        return toRecord(await api.readNamespacedLease({ name, namespace }));
      } catch (error) {
        if (status(error) === 404) return undefined;
        throw error;
      }
    },
    create: async (r) => toRecord(await conflicts(api.createNamespacedLease({ namespace, body: toLease(r) }))),
    update: async (r) => toRecord(await conflicts(api.replaceNamespacedLease({ name, namespace, body: toLease(r) }))),
  };
}

/** MicroTime comes back from the client as a string (its deserializer keeps the wire form). */
function asDate(value: Date | string | undefined): Date | undefined {
  if (value === undefined || value instanceof Date) return value;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}
