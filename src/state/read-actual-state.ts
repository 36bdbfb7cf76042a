import { AmsyncError } from '../errors.js';
import type { ActualApikey, ActualSshUser, ActualState, SecretValue } from '../model/index.js';
import type { RemoteApikey, RemoteSshUser, ServiceReader } from './service-reader.js';

export interface ActualStateRead {
  readonly state: ActualState;
  /** Apikey tokens by apikey id, for the token sink. Never part of the state or the plan. */
  readonly tokens: ReadonlyMap<number, { readonly name: string; readonly token: SecretValue }>;
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
 * Lists both kinds concurrently (they share the client's one rate limiter) and normalises
 * them: roles to sorted id sets, unknown fields dropped, an item listed twice kept once.
 * A listing that shifted while it was read (one id with two contents) is read again once;
 * shifted twice, it fails the run: no plan, so no delete, is made from it.
 */
export async function readActualState(reader: ServiceReader, options: ReadActualStateOptions = {}): Promise<ActualStateRead> {
  const withTokens = options.tokens ?? true;
  const [users, keys] = await Promise.all([readConsistent(() => reader.listSshUsers()), readConsistent(() => reader.listApikeys({ tokens: withTokens }))]);
  const tokens = new Map<number, { name: string; token: SecretValue }>();
  if (withTokens) for (const k of keys) if (k.token) tokens.set(k.id, { name: k.name, token: k.token });
  return {
    state: { sshUsers: uniqueById(users, normaliseSshUser), apikeys: uniqueById(keys, normaliseApikey) },
    tokens,
  };
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

export function normaliseSshUser(u: RemoteSshUser): ActualSshUser {
  return { id: u.id, username: u.username, level: u.level };
}

// Most keys have no roles: one shared empty list instead of one each (100k at 100k keys).
const noRoles: readonly number[] = Object.freeze([]);

export function normaliseApikey(k: RemoteApikey): ActualApikey {
  // The client already gives sorted unique ids: no copies then (two arrays and a Set per key).
  const roles = k.roles.length === 0 ? noRoles : isSortedIds(k.roles) ? [...k.roles] : [...new Set(k.roles.map((r) => (typeof r === 'number' ? r : r.id)))].sort((a, b) => a - b);
  return { id: k.id, name: k.name, superuser: k.superuser, roles };
}

function isSortedIds(roles: RemoteApikey['roles']): roles is readonly number[] {
  for (let i = 0; i < roles.length; i += 1) {
    const r = roles[i];
    if (typeof r !== 'number' || (i > 0 && !((roles[i - 1] as number) < r))) return false;
  }
  return true;
}

/**
 * Each item normalised once, the first time its id is seen (one pass: no copy of the list in
 * between). Ids in ascending order, as services list them, cannot repeat: the set of ids seen
 * is built only from the first id out of order (at 100k items, a Set of 100k for nothing).
 */
function uniqueById<R extends { id: number }, T>(items: readonly R[], normalise: (item: R) => T): T[] {
  let seen: Set<number> | undefined;
  let last = Number.NEGATIVE_INFINITY;
  const out: T[] = [];
  for (let i = 0; i < items.length; i += 1) {
    const item = items[i] as R;
    const { id } = item;
    if (seen === undefined) {
      if (id > last) {
        last = id;
        out.push(normalise(item));
        continue;
      }
      seen = new Set<number>();
      for (let j = 0; j < i; j += 1) seen.add((items[j] as R).id);
    }
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(normalise(item));
  }
  return out;
}
