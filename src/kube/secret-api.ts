import type { V1Secret } from '@kubernetes/client-node';
import type { KubeSecretRef } from '../settings/index.js';
import { loadKubeConfig, type KubeServer } from './kube-config.js';

/** The RBAC verb of each call the sink makes on its one Secret. */
export type SecretVerb = 'get' | 'create' | 'update';

/**
 * A call the API server (or the way to it) refused: `status` is the HTTP status (403, 404,
 * 409, ...), undefined when no answer came (connection refused, TLS). The library's own
 * message stays in `cause`; it is never shown (it carries the whole answer).
 */
export class KubeCallError extends Error {
  constructor(
    readonly verb: SecretVerb,
    readonly status: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(`${verb} secrets: ${status === undefined ? 'no answer' : `HTTP ${status}`}`, options);
    this.name = 'KubeCallError';
  }
}

/** The three calls the sink makes on its one Secret; a refusal is a KubeCallError. */
export interface SecretApi {
  /** The Secret, or undefined when there is none (404). */
  read(): Promise<V1Secret | undefined>;
  create(body: V1Secret): Promise<V1Secret>;
  /** An update: the API server refuses it with 409 when `metadata.resourceVersion` is not the current one. */
  replace(body: V1Secret): Promise<V1Secret>;
}

/** The Secret through @kubernetes/client-node's CoreV1Api, configured as for the Lease (loadKubeConfig). */
export async function kubeSecretApi(ref: KubeSecretRef, server?: KubeServer): Promise<SecretApi> {
  const { k8s, config } = await loadKubeConfig(server);
  const api = config.makeApiClient(k8s.CoreV1Api);
  const { namespace, name } = ref;
  const call = async <T>(verb: SecretVerb, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      throw new KubeCallError(verb, error instanceof k8s.ApiException ? error.code : undefined, { cause: error });
    }
  };
  return {
    async read() {
      try {
        return await call('get', () => api.readNamespacedSecret({ name, namespace }));
      } catch (error) {
        if (error instanceof KubeCallError && error.status === 404) return undefined;
        throw error;
      }
    },
    create: (body) => call('create', () => api.createNamespacedSecret({ namespace, body })),
    replace: (body) => call('update', () => api.replaceNamespacedSecret({ name, namespace, body })),
  };
}
