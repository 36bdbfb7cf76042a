/** `NAMESPACE/NAME` of a Kubernetes Secret, as `kubernetesSecret` takes it. */
export interface KubeSecretRef {
  readonly namespace: string;
  readonly name: string;
}

// A namespace is a DNS-1123 label, a Secret's name a DNS-1123 subdomain (as the API server checks them).
const kubeSecretRefPattern = /^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)\/([a-z0-9]([-.a-z0-9]{0,251}[a-z0-9])?)$/;

/** Parses `NAMESPACE/NAME`; undefined when it is not one (the caller names the setting). */
export function parseKubeSecretRef(text: string): KubeSecretRef | undefined {
  const m = kubeSecretRefPattern.exec(text);
  return m ? { namespace: m[1]!, name: m[3]! } : undefined;
}
