import type { V1Secret } from '@kubernetes/client-node';
import { KubeCallError, type SecretApi } from './secret-api.js';

/**
 * One read-modify-write of a Secret's data, shared by the token sink (KubeSecretSink) and the
 * integrator key's data key (KubeSecretValue): the Secret read, `entries` (data key -> value,
 * not yet base64) set where the value differs, and written back with the resourceVersion it
 * was read at. A 409 (someone else wrote it in between, or created it meanwhile) reads it
 * again and retries, `attempts` rounds at most; then the 409 is thrown. Data keys not in
 * `entries` are left as they are; nothing is written when every value is already there.
 * A missing Secret is created with the body `missing` makes of the data (which may throw
 * instead). Refusals are the API's KubeCallError (or what `missing` throws); none carries a value.
 * Returns the data keys written.
 */
export async function writeSecretData(
  api: SecretApi,
  entries: ReadonlyMap<string, string>,
  attempts: number,
  missing: (data: Record<string, string>) => V1Secret,
): Promise<ReadonlySet<string>> {
  for (let attempt = 1; ; attempt += 1) {
    const current = await api.read();
    const data: Record<string, string> = { ...(current?.data ?? {}) };
    const changed = new Set<string>();
    for (const [key, value] of entries) {
      const encoded = Buffer.from(value, 'utf8').toString('base64');
      if (data[key] === encoded) continue;
      data[key] = encoded;
      changed.add(key);
    }
    if (changed.size === 0) return changed;
    try {
      if (current === undefined) await api.create(missing(data));
      else await api.replace({ ...current, data });
      return changed;
    } catch (error) {
      if (error instanceof KubeCallError && error.status === 409 && attempt < attempts) continue;
      throw error;
    }
  }
}
