import type { ActualApikey, ActualSshUser, ActualState, SecretValue } from '../model/index.js';
import type { RemoteApikey, RemoteSshUser, ServiceReader } from './service-reader.js';

export interface ActualStateRead {
  readonly state: ActualState;
  /** Apikey tokens by apikey id, for the token sink. Never part of the state or the plan. */
  readonly tokens: ReadonlyMap<number, { readonly name: string; readonly token: SecretValue }>;
}

/**
 * Lists both kinds concurrently (they share the client's one rate limiter) and normalises
 * them: roles to sorted id sets, unknown fields dropped, an item listed twice kept once.
 */
export async function readActualState(reader: ServiceReader): Promise<ActualStateRead> {
  const [users, keys] = await Promise.all([reader.listSshUsers(), reader.listApikeys()]);
  const tokens = new Map<number, { name: string; token: SecretValue }>();
  for (const k of keys) if (k.token) tokens.set(k.id, { name: k.name, token: k.token });
  return {
    state: { sshUsers: uniqueById(users.map(normaliseSshUser)), apikeys: uniqueById(keys.map(normaliseApikey)) },
    tokens,
  };
}

export function normaliseSshUser(u: RemoteSshUser): ActualSshUser {
  return { id: u.id, username: u.username, level: u.level };
}

export function normaliseApikey(k: RemoteApikey): ActualApikey {
  const ids = k.roles.map((r) => (typeof r === 'number' ? r : r.id));
  return { id: k.id, name: k.name, superuser: k.superuser, roles: [...new Set(ids)].sort((a, b) => a - b) };
}

function uniqueById<T extends { id: number }>(items: readonly T[]): T[] {
  const seen = new Set<number>();
  return items.filter((i) => (seen.has(i.id) ? false : (seen.add(i.id), true)));
}
