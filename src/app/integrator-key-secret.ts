import type { IntegratorKeyStore } from '../api/index.js';
import { KubeCallError, KubeSecretValue, KubeValueMissingError, kubeSecretApi, reachProblem, type SecretApi } from '../kube/index.js';
import type { KubeSecretKeyRef } from '../settings/index.js';

/** Where the RBAC the write-back needs is shown. */
const rbacExample = 'examples/kubernetes/integrator-key-rbac.yaml';

/**
 * The integrator key in a data key of a Kubernetes Secret (integratorKeySecret), for the
 * integrator key provider: read before each exchange, a rotated key written back with the
 * resourceVersion it was read at (409: read again, retried). Each refusal is one line with an
 * errno-like code (`kube_forbidden`, `kube_conflict`, `kube_not_found`, `kube_unreachable`...):
 * the daemon's /readyz and metrics show the code, the run's error the line. Never the key.
 */
export function integratorKeySecretStore(ref: KubeSecretKeyRef, api: () => Promise<SecretApi> = () => kubeSecretApi(ref)): IntegratorKeyStore {
  const value = new KubeSecretValue(ref.key, api);
  const { namespace, name, key } = ref;
  const refused = (error: unknown): Error => {
    const failure = (code: string, message: string): Error => Object.assign(new Error(message), { code });
    if (error instanceof KubeValueMissingError) {
      return error.what === 'secret'
        ? failure('kube_not_found', `there is no Secret ${name} in namespace ${namespace}; create it with the key in its data key ${key}`)
        : failure('kube_no_key', `the Secret has no data key ${key}; put the integrator key there`);
    }
    if (!(error instanceof KubeCallError)) return error instanceof Error ? error : new Error(String(error));
    switch (error.status) {
      case 403:
        return failure(
          'kube_forbidden',
          `the Kubernetes API server refused to ${error.verb} it (403 Forbidden): the service account lacks the RBAC verb "${error.verb}" on resource "secrets" (resourceNames: [${name}]) in namespace ${namespace}`,
        );
      case 401:
        return failure('kube_unauthorized', "the Kubernetes API server did not accept amsync's credentials (401 Unauthorized)");
      case 404:
        return failure('kube_not_found', `the Kubernetes API server has no Secret ${name} in namespace ${namespace} (404)`);
      case 409:
        return failure('kube_conflict', 'it was changed by someone else at every try while amsync wrote it (409 Conflict on its resourceVersion)');
      case undefined:
        return failure('kube_unreachable', `the Kubernetes API server could not be reached (${reachProblem(error.cause)})`);
      default:
        return failure(`kube_${error.status}`, `the Kubernetes API server answered ${error.status} to ${error.verb}`);
    }
  };
  return {
    describe: `the Secret ${namespace}/${name} (data key ${key})`,
    fix: `Grant amsync's service account get and update on the Secret ${name} in namespace ${namespace} (a Role with resourceNames, as ${rbacExample})`,
    read: () => value.read().catch((error: unknown) => Promise.reject(refused(error))),
    write: (next) => value.write(next).catch((error: unknown) => Promise.reject(refused(error))),
  };
}
