import { resolve } from 'node:path';
import { KubeSecretSink, kubeSecretApi } from '../kube/index.js';
import { TokenSink, type SecretSink } from '../secrets/index.js';
import { parseKubeSecretRef, type Settings } from '../settings/index.js';

/**
 * Where apikey tokens go: the files of tokensDir, or the Kubernetes Secret of kubernetesSecret
 * (its client is loaded at the first write: the library is large); both set is refused before
 * (checkLocalInputs). Making one does no I/O: `validate` makes it to check the items' names.
 */
export function secretSinkOf(settings: Pick<Settings, 'tokensDir' | 'kubernetesSecret'>): SecretSink | undefined {
  if (settings.tokensDir !== undefined) return new TokenSink(resolve(settings.tokensDir));
  const ref = settings.kubernetesSecret === undefined ? undefined : parseKubeSecretRef(settings.kubernetesSecret);
  if (ref === undefined) return undefined;
  return new KubeSecretSink({ ref, api: () => kubeSecretApi(ref) });
}
