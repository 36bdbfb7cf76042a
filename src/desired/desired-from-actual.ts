import type { ActualState, DesiredApikey, DesiredSshUser, DesiredState, ItemRef } from '../model/index.js';
import { compareStrings } from '../text/index.js';

/** A remote item a desired-state file cannot declare; it stays unmanaged. */
export interface SkippedItem extends ItemRef {
  readonly reason: string;
}

export interface DesiredFromActual {
  readonly desired: DesiredState;
  readonly skipped: readonly SkippedItem[];
  /** Apikeys that share their name with another and so carry `id:`. */
  readonly pinned: number;
}

/**
 * The actual state as a desired state that plans zero changes against it (`amsync export`):
 * - no passwords: an existing user needs none, and its password is then left alone;
 * - apikeys whose name another apikey shares are pinned with `id:` (names are not unique on
 *   the service, and a name alone would be ambiguous); the others are identified by name, so
 *   the file stays portable;
 * - prune stays off and nothing is protected: the file adopts, it never deletes;
 * - deterministic order (by key, then id), so exporting twice gives the same file.
 * An item the file format cannot express (a name with outer spaces, say) is left out and
 * reported: it is then unmanaged, which plans no change either.
 */
export function desiredFromActual(actual: ActualState): DesiredFromActual {
  const skipped: SkippedItem[] = [];
  const sshUsers: DesiredSshUser[] = [];
  const usernameCount = new Map<string, number>();
  for (const u of actual.sshUsers) usernameCount.set(u.username, (usernameCount.get(u.username) ?? 0) + 1);
  const seenUsernames = new Set<string>();
  for (const u of [...actual.sshUsers].sort((a, b) => compareStrings(a.username, b.username) || a.id - b.id)) {
    const why =
      nameProblem(u.username) ??
      (u.level === '' ? 'its level is empty' : undefined) ??
      (seenUsernames.has(u.username) ? 'another SSH user has the same username (the service should not allow it)' : undefined);
    if (why) {
      skipped.push({ kind: 'sshUser', key: u.username, id: u.id, reason: why });
      continue;
    }
    seenUsernames.add(u.username);
    // Usernames are unique on the service; should two share one anyway, pin the first, or the
    // name alone would be ambiguous.
    const shared = (usernameCount.get(u.username) ?? 0) > 1;
    sshUsers.push({ username: u.username, ...(shared ? { id: u.id } : {}), level: u.level, ensure: 'present' });
  }

  const nameCount = new Map<string, number>();
  for (const k of actual.apikeys) nameCount.set(k.name, (nameCount.get(k.name) ?? 0) + 1);
  const apikeys: DesiredApikey[] = [];
  let pinned = 0;
  for (const k of [...actual.apikeys].sort((a, b) => compareStrings(a.name, b.name) || a.id - b.id)) {
    const shared = (nameCount.get(k.name) ?? 0) > 1;
    const why =
      nameProblem(k.name) ??
      (k.roles.some((r) => !Number.isInteger(r) || r <= 0) ? 'a role id is not a positive integer' : undefined) ??
      (shared && k.id <= 0 ? 'it shares its name and its id cannot be pinned' : undefined);
    if (why) {
      skipped.push({ kind: 'apikey', key: k.name, id: k.id, reason: why });
      continue;
    }
    if (shared) pinned += 1;
    apikeys.push({ name: k.name, ...(shared ? { id: k.id } : {}), superuser: k.superuser, roles: [...new Set(k.roles)].sort((a, b) => a - b), ensure: 'present' });
  }

  return {
    desired: { sshUsers, apikeys, prune: { sshUsers: false, apikeys: false }, protect: { sshUsers: [], apikeys: [] } },
    skipped,
    pinned,
  };
}

/** The desired-state file's rules for a username or apikey name (src/desired/desired-schema.ts). */
function nameProblem(name: string): string | undefined {
  if (name === '') return 'its name is empty';
  if (name.trim() !== name) return 'its name has leading or trailing spaces';
  return undefined;
}

