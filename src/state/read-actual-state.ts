import { AmsyncError } from '../errors.js';
import type { AccessService, ActualApikey, ActualState, ListedApikey, SecretValue } from '../model/index.js';
import { apikeyKind, listedItem } from '../model/index.js';

/** What reading the state needs of the service: its two listings. */
export type StateSource = Pick<AccessService, 'listSshUsers' | 'listApikeys'>;

export interface ActualStateRead {
  readonly state: ActualState;
  /**
   * Apikey tokens by apikey id, for the token sink. Never part of the state or the plan. The
   * secret itself, not a record with the key's name (which the state has): at 100k keys, 100k
   * objects fewer held through the run.
   */
  readonly tokens: ReadonlyMap<number, SecretValue>;
}

export interface ReadActualStateOptions {
  /**
   * Keep the apikey tokens (for a token sink). Without one the reader is asked to leave them
   * out, page by page: at 100k keys they would be ~17 MB held for nothing.
   * @default true
   */
  readonly tokens?: boolean;
}

/**
 * Lists both kinds concurrently (they share the client's one rate limiter). The service
 * gives them normalised and each id once (AccessService); what is done here is only what a
 * run needs on top: a listing that shifted while it was read (one id with two contents) is
 * read again once; shifted twice, it fails the run: no plan, so no delete, is made from it.
 * The tokens are taken out of the state, which never holds one.
 */
export async function readActualState(source: StateSource, options: ReadActualStateOptions = {}): Promise<ActualStateRead> {
  const withTokens = options.tokens ?? true;
  const [sshUsers, keys] = await Promise.all([readConsistent(() => source.listSshUsers()), readConsistent(() => source.listApikeys({ tokens: withTokens }))]);
  const tokens = new Map<number, SecretValue>();
  if (withTokens) for (const k of keys) if (k.token) tokens.set(k.id, k.token);
  return { state: { sshUsers, apikeys: withoutTokens(keys) }, tokens };
}

/**
 * The keys as the state holds them. A listed key with a token is a different object from
 * an ActualApikey only by that field; the state is typed without it and never printed with
 * it, but a plan or a saved state must not even carry it: copied when there is one.
 */
export function withoutTokens(keys: readonly ListedApikey[]): readonly ActualApikey[] {
  let out: ActualApikey[] | undefined;
  for (let i = 0; i < keys.length; i += 1) {
    const k = keys[i] as ListedApikey;
    if (k.token === undefined) {
      out?.push(k);
      continue;
    }
    out ??= keys.slice(0, i);
    out.push(listedItem(apikeyKind, k));
  }
  return out ?? keys;
}

/** The stable code of the client's ListingIncompleteError for a listing that shifted. */
export const inconsistentListing = 'listing_inconsistent';

async function readConsistent<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (!isInconsistent(error)) throw error;
  }
  try {
    return await read();
  } catch (error) {
    if (!isInconsistent(error)) throw error;
    throw new AmsyncError(inconsistentListing, `${error.message}; read again, it shifted again: the listing is incomplete, nothing is planned from it`, { cause: error });
  }
}

function isInconsistent(error: unknown): error is AmsyncError {
  return error instanceof AmsyncError && error.code === inconsistentListing;
}
