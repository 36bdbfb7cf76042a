import type * as KubeClient from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';

/** An API server given directly (tests), instead of the pod's service account or ~/.kube/config. */
export interface KubeServer {
  readonly url: string;
  readonly token?: string;
  readonly skipTLSVerify?: boolean;
}

/** The client library, loaded on first use only: it is large, and most runs never talk to Kubernetes. */
export type KubeClientModule = typeof KubeClient;

/**
 * The client library and a config as kubectl finds it: the pod's service account in a cluster,
 * else KUBECONFIG or ~/.kube/config; `server` instead, when given. Shared by the Lease (leader
 * election) and the Secret sink, so both talk to the same cluster as the same user.
 */
export async function loadKubeConfig(server?: KubeServer): Promise<{ readonly k8s: KubeClientModule; readonly config: KubeConfig }> {
  const k8s = await import('@kubernetes/client-node');
  const config = new k8s.KubeConfig();
  if (server) {
    config.loadFromClusterAndUser(
      { name: 'amsync', server: server.url, skipTLSVerify: server.skipTLSVerify ?? false },
      { name: 'amsync', ...(server.token ? { token: server.token } : {}) },
    );
  } else {
    config.loadFromDefault();
  }
  return { k8s, config };
}
