/** `NAMESPACE/NAME` of a Kubernetes Secret, as `kubernetesSecret` takes it. */
export interface KubeSecretRef {
  readonly namespace: string;
  readonly name: string;
}

// A namespace is a DNS-1123 label, a Secret's name a DNS-1123 subdomain (as the API server checks them).
const kubeSecretRefPattern = /^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)\/([a-z0-9]([-.a-z0-9]{0,251}[a-z0-9])?)$/;

/** `NAMESPACE/NAME[/KEY]` of one data key of a Secret, as `integratorKeySecret` takes it. */
export interface KubeSecretKeyRef extends KubeSecretRef {
  /** The data key. @default 'integrator-key' */
  readonly key: string;
}

/** The data key `integratorKeySecret` reads and writes when it names none. */
export const defaultIntegratorKeyDataKey = 'integrator-key';

// A data key as the API server checks it: [-._a-zA-Z0-9]+, at most 253, not . or .. nor starting with ..
const dataKeyPattern = /^[-._a-zA-Z0-9]{1,253}$/;

/** Parses `NAMESPACE/NAME[/KEY]`; undefined when it is not one. */
export function parseKubeSecretKeyRef(text: string, defaultKey = defaultIntegratorKeyDataKey): KubeSecretKeyRef | undefined {
  const parts = text.split('/');
  if (parts.length < 2 || parts.length > 3) return undefined;
  const ref = parseKubeSecretRef(`${parts[0]}/${parts[1]}`);
  const key = parts[2] ?? defaultKey;
  if (ref === undefined || !dataKeyPattern.test(key) || key === '.' || key.startsWith('..')) return undefined;
  return { ...ref, key };
}

/** Parses `NAMESPACE/NAME`; undefined when it is not one (the caller names the setting). */
export function parseKubeSecretRef(text: string): KubeSecretRef | undefined {
  const m = kubeSecretRefPattern.exec(text);
  return m ? { namespace: m[1]!, name: m[3]! } : undefined;
}
