import type { SecretApi } from './secret-api.js';
import { writeSecretData } from './secret-data.js';

/** Read-modify-write rounds of one write before a run of 409s gives up. */
export const defaultValueWriteAttempts = 5;

/** What the Secret lacks, for read(): the Secret itself, or its data key. */
export class KubeValueMissingError extends Error {
  constructor(readonly what: 'secret' | 'key') {
    super(what === 'secret' ? 'no such Secret' : 'no such data key');
    this.name = 'KubeValueMissingError';
  }
}

/**
 * One data key of one existing Kubernetes Secret (the integrator key's): read, and written with
 * the resourceVersion it was read at; a 409 (someone else wrote the Secret in between) reads it
 * again and retries, `attempts` rounds at most. Other data keys are left as they are. The Secret
 * is never created: it holds the key, so a missing one is an error. Refusals are KubeCallError
 * (or KubeValueMissingError); no error carries the value.
 */
export class KubeSecretValue {
  #api: Promise<SecretApi> | undefined;

  constructor(
    private readonly key: string,
    private readonly api: () => Promise<SecretApi>,
    private readonly attempts = defaultValueWriteAttempts,
  ) {}

  async read(): Promise<string> {
    const secret = await (await this.#apiOnce()).read();
    if (secret === undefined) throw new KubeValueMissingError('secret');
    const value = secret.data?.[this.key];
    if (value === undefined) throw new KubeValueMissingError('key');
    return Buffer.from(value, 'base64').toString('utf8');
  }

  async write(value: string): Promise<void> {
    // The Secret holds the key: it is never created, a missing one is an error.
    await writeSecretData(await this.#apiOnce(), new Map([[this.key, value]]), this.attempts, () => {
      throw new KubeValueMissingError('secret');
    });
  }

  #apiOnce(): Promise<SecretApi> {
    this.#api ??= this.api();
    return this.#api;
  }
}
