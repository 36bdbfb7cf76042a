import type * as KubeClient from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';
import { AmsyncError } from '../errors.js';

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
  try {
    if (server) {
      config.loadFromClusterAndUser(
        { name: 'amsync', server: server.url, skipTLSVerify: server.skipTLSVerify ?? false },
        { name: 'amsync', ...(server.token ? { token: server.token } : {}) },
      );
    } else {
      config.loadFromDefault();
    }
  } catch (error) {
    throw kubeConfigError(error);
  }
  return { k8s, config };
}

/**
 * A kubeconfig that cannot be loaded. The library's message quotes the file around a YAML error,
 * and a kubeconfig holds bearer tokens and client keys: only the error's kind and the file's
 * name are said, and the library's error is not kept as the cause (printing it would quote it).
 */
function kubeConfigError(error: unknown): AmsyncError {
  const where = process.env.KUBECONFIG ? `KUBECONFIG ${process.env.KUBECONFIG}` : "~/.kube/config or the pod's service account";
  const code = (error as { code?: unknown } | null)?.code;
  const kind = typeof code === 'string' ? code : error instanceof Error ? error.name : typeof error;
  return new AmsyncError('kube_config', `the Kubernetes config (${where}) could not be loaded (${kind}); its text is not shown, as a kubeconfig holds credentials`);
}
