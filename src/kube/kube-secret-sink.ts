import type { V1Secret } from '@kubernetes/client-node';
import { AmsyncError } from '../errors.js';
import type { SecretValue } from '../model/index.js';
import type { KeptCurrent, PasswordSink, SecretSink, TokenFile } from '../secrets/index.js';
import type { KubeSecretRef } from '../settings/index.js';
import { KubeCallError, type SecretApi, type SecretVerb } from './secret-api.js';
import { writeSecretData } from './secret-data.js';
import { dataKeyProblem, passwordDataKey, SecretKeyTooLongError, secretDataKey } from './secret-data-key.js';

/** Read-modify-write rounds of one write before a run of 409s gives up (someone else keeps writing the Secret). */
export const defaultSecretWriteAttempts = 5;

/** The Secret could not be read or written: one line, with what to do; no secret, no answer body. */
export class KubeSecretError extends AmsyncError {
  /** The message without what it cost (`its token was not written`): said again for another kind of secret. */
  readonly reason: string;

  constructor(message: string, options?: { cause?: unknown; reason?: string }) {
    super('kube_secret', message, options);
    this.name = 'KubeSecretError';
    this.reason = options?.reason ?? message;
  }

  /** The same refusal, ending with what it cost a generated password. */
  forPassword(): KubeSecretError {
    return new KubeSecretError(`${this.reason}; its password was not written`, { cause: this.cause, reason: this.reason });
  }
}

export interface KubeSecretSinkOptions {
  readonly ref: KubeSecretRef;
  /** The API calls, made on first use (the client library is loaded only then). */
  readonly api: () => Promise<SecretApi>;
  /** @default defaultSecretWriteAttempts */
  readonly attempts?: number;
}

/** Data keys and their values (not yet base64) for one read-modify-write. */
type Batch = { readonly entries: Map<string, string>; done?: Promise<ReadonlySet<string>> };

/**
 * Server-generated secrets in one Kubernetes Secret, one data key per item (secretDataKey):
 * read, changed only where a value differs, written back with the resourceVersion it was read
 * at. A 409 (someone else wrote it in between) reads it again and retries, a bounded number of
 * times; a missing Secret (404) is created. Data keys amsync does not write (another
 * tool's, a removed item's) are left alone.
 *
 * Writes made at once (the creates of one run) share one read-modify-write: they wait for the
 * one before them and go together, so a run's creates do not conflict with each other.
 */
export class KubeSecretSink implements SecretSink {
  readonly describe: string;
  readonly #options: KubeSecretSinkOptions;
  #api: Promise<SecretApi> | undefined;
  #open: Batch | undefined;
  #last: Promise<unknown> = Promise.resolve();

  constructor(options: KubeSecretSinkOptions) {
    this.#options = options;
    this.describe = `the Secret ${options.ref.namespace}/${options.ref.name}`;
  }

  async write(name: string, secret: SecretValue): Promise<boolean> {
    const key = this.#keyOf(name);
    const changed = await this.#enqueue(new Map([[key, secret.reveal()]]));
    return changed.has(key);
  }

  async keepCurrent(items: Iterable<TokenFile>): Promise<KeptCurrent> {
    const entries = new Map<string, string>();
    const names = new Map<string, string>();
    const errors: { name: string; error: AmsyncError }[] = [];
    for (const item of items) {
      try {
        const key = this.#keyOf(item.name);
        entries.set(key, item.token.reveal());
        names.set(key, item.name);
      } catch (error) {
        if (!(error instanceof SecretKeyTooLongError)) throw error;
        errors.push({ name: item.name, error });
      }
    }
    if (entries.size === 0) return { written: 0, errors };
    try {
      const changed = await this.#enqueue(entries);
      return { written: changed.size, errors };
    } catch (error) {
      if (!(error instanceof KubeSecretError)) throw error;
      // Which items already had their secret is unknown when the Secret could not be read: each one says so.
      for (const name of names.values()) errors.push({ name, error });
      return { written: 0, errors };
    }
  }

  /**
   * Generated SSH passwords in the same Secret, under `password__<username>` (passwordDataKey:
   * no apikey's data key has `__`), written in the same read-modify-writes as the tokens.
   */
  passwordSink(): PasswordSink {
    return {
      describe: this.describe,
      nameProblem: (username) => dataKeyProblem(passwordDataKey(username)),
      write: async (username, password) => {
        const key = this.#keyOf(username, passwordDataKey);
        try {
          const changed = await this.#enqueue(new Map([[key, password.reveal()]]));
          return changed.has(key);
        } catch (error) {
          throw error instanceof KubeSecretError ? error.forPassword() : error;
        }
      },
      readAll: async (usernames) => {
        const found = new Map<string, string>();
        let data: Record<string, string> | undefined;
        try {
          data = (await this.#call((await this.#apiOnce()).read()))?.data;
        } catch (error) {
          // Unreadable: nothing the sink could give back (the plan notes it; a write says why).
          if (error instanceof KubeSecretError) return found;
          throw error;
        }
        for (const username of usernames) {
          const value = data?.[passwordDataKey(username)];
          if (value !== undefined) found.set(username, Buffer.from(value, 'base64').toString('utf8'));
        }
        return found;
      },
    };
  }

  /** Why an item of this name has no data key its token could be written under (dataKeyProblem of secretDataKey). */
  nameProblem(name: string): string | undefined {
    return dataKeyProblem(secretDataKey(name));
  }

  /** The data key `keyOf` makes of `name`, as every write takes it; throws SecretKeyTooLongError for one the Secret cannot have. */
  #keyOf(name: string, keyOf: (name: string) => string = secretDataKey): string {
    const key = keyOf(name);
    const problem = dataKeyProblem(key);
    if (problem !== undefined) throw new SecretKeyTooLongError(problem, this.describe);
    return key;
  }

  /** Joins the batch that has not started yet, or opens one that starts after the last. */
  #enqueue(entries: ReadonlyMap<string, string>): Promise<ReadonlySet<string>> {
    let batch = this.#open;
    if (batch === undefined) {
      const opened: Batch = { entries: new Map() };
      opened.done = this.#last.then(() => {
        if (this.#open === opened) this.#open = undefined;
        return this.#readModifyWrite(opened.entries);
      });
      this.#last = opened.done.catch(() => undefined);
      this.#open = opened;
      batch = opened;
    }
    for (const [key, value] of entries) batch.entries.set(key, value);
    return batch.done!;
  }

  /** The data keys written (their value was new or different); throws KubeSecretError. */
  async #readModifyWrite(entries: ReadonlyMap<string, string>): Promise<ReadonlySet<string>> {
    const api = await this.#apiOnce();
    const attempts = this.#options.attempts ?? defaultSecretWriteAttempts;
    try {
      return await writeSecretData(api, entries, attempts, (data) => this.#fresh(data));
    } catch (error) {
      throw this.#refused(error, attempts);
    }
  }

  #fresh(data: Record<string, string>): V1Secret {
    const { namespace, name } = this.#options.ref;
    return {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'Opaque',
      metadata: { name, namespace, labels: { 'app.kubernetes.io/managed-by': 'amsync' } },
      data,
    };
  }

  #apiOnce(): Promise<SecretApi> {
    this.#api ??= this.#options.api();
    return this.#api;
  }

  async #call<T>(call: Promise<T>): Promise<T> {
    try {
      return await call;
    } catch (error) {
      throw this.#refused(error, 1);
    }
  }

  /** The one line for a refused call: what was refused, why in words, and what to do. */
  #refused(error: unknown, attempts: number): unknown {
    if (!(error instanceof KubeCallError)) return error;
    const { namespace, name } = this.#options.ref;
    const head = `cannot write ${this.describe}`;
    const tail = 'its token was not written';
    const message = ((): string => {
      switch (error.status) {
        case 403:
          // RBAC cannot limit create to a name (a create request names no object in its URL): say so rather than suggest a rule that does not work.
          return error.verb === 'create'
            ? `${head}: the Kubernetes API server refused to create it (403 Forbidden): the service account lacks the RBAC verb "create" on resource "secrets" in namespace ${namespace}; create the Secret beforehand (as examples/kubernetes/token-secret.yaml does), or grant create on secrets in a Role (it cannot be limited to one name)`
            : `${head}: the Kubernetes API server refused to ${error.verb} it (403 Forbidden): the service account lacks the RBAC verb "${error.verb}" on resource "secrets" (resourceNames: [${name}]) in namespace ${namespace}; grant get and update on it in a Role (examples/kubernetes/token-secret.yaml)`;
        case 401:
          return `${head}: the Kubernetes API server did not accept amsync's credentials (401 Unauthorized); check the service account token or the kubeconfig`;
        case 404:
          return `${head}: the Kubernetes API server has no namespace ${namespace} (404 Not Found on ${verbWords(error.verb)}); create it, or set kubernetesSecret to an existing namespace`;
        case 409:
          return `${head}: it was changed by someone else ${attempts} times in a row while amsync wrote it (409 Conflict on its resourceVersion); the next run tries again`;
        case 422:
          return `${head}: the Kubernetes API server refused it as invalid (422; a Secret holds at most 1 MiB)`;
        case undefined:
          return `${head}: the Kubernetes API server could not be reached (${reachProblem(error.cause)})`;
        default:
          return `${head}: the Kubernetes API server answered ${error.status} to ${verbWords(error.verb)}`;
      }
    })();
    return new KubeSecretError(`${message}; ${tail}`, { cause: error, reason: message });
  }
}

function verbWords(verb: SecretVerb): string {
  return verb === 'get' ? 'the read' : verb === 'create' ? 'the create' : 'the update';
}

/** ECONNREFUSED, a TLS error code: the errno alone (found down the chain of causes), never the library's message. */
export function reachProblem(cause: unknown): string {
  let at = cause;
  for (let depth = 0; depth < 5 && at !== null && typeof at === 'object'; depth += 1) {
    const code = (at as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(code)) return code;
    at = (at as { cause?: unknown }).cause;
  }
  return 'no answer';
}
