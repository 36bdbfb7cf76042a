import type { ActualOf, ActualState, DesiredApikey, DesiredSshUser, DesiredState, ItemRef, KindDeclaration } from '../model/index.js';
import { apikeyKind, canonicalValue, identityOf, sshUserKind, stateFieldsOf } from '../model/index.js';
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
  const users = exportKind(sshUserKind, actual.sshUsers, skipped);
  const keys = exportKind(apikeyKind, actual.apikeys, skipped);
  return {
    desired: {
      sshUsers: users.items as unknown as DesiredSshUser[],
      apikeys: keys.items as unknown as DesiredApikey[],
      prune: { sshUsers: false, apikeys: false },
      protect: { sshUsers: [], apikeys: [] },
    },
    skipped,
    pinned: keys.pinned,
  };
}

/**
 * One kind's listed items as declared items, by its declaration (model/kinds): the identity,
 * `id` where it must be pinned, the listed fields (sets sorted and unique), `ensure: present`.
 * Where the service keeps identities unique, a repeated one is left out (the first is pinned);
 * where it does not, every item that shares its identity is pinned.
 */
function exportKind<K extends KindDeclaration>(kind: K, listed: readonly ActualOf<K>[], skipped: SkippedItem[]): { items: Record<string, unknown>[]; pinned: number } {
  const identity = identityOf(kind);
  const keyOf = (item: ActualOf<K>): string => item[identity] as string;
  const count = new Map<string, number>();
  for (const item of listed) count.set(keyOf(item), (count.get(keyOf(item)) ?? 0) + 1);
  const seen = new Set<string>();
  const items: Record<string, unknown>[] = [];
  let pinned = 0;
  for (const item of [...listed].sort((a, b) => compareStrings(keyOf(a), keyOf(b)) || a.id - b.id)) {
    const key = keyOf(item);
    const shared = (count.get(key) ?? 0) > 1;
    const why =
      nameProblem(key) ??
      fieldProblem(kind, item) ??
      (kind.uniqueIdentity
        ? seen.has(key)
          ? `another ${kind.noun} has the same ${identity} (the service should not allow it)`
          : undefined
        : shared && item.id <= 0
          ? 'it shares its name and its id cannot be pinned'
          : undefined);
    if (why) {
      skipped.push({ kind: kind.kind, key, id: item.id, reason: why });
      continue;
    }
    seen.add(key);
    if (shared && !kind.uniqueIdentity) pinned += 1;
    const values = item as unknown as Readonly<Record<string, unknown>>;
    const out: Record<string, unknown> = {};
    for (const [name, field] of stateFieldsOf(kind)) {
      out[name] = canonicalValue(field, values[name]);
      // Usernames are unique on the service; should two share one anyway, pin the first, or the
      // name alone would be ambiguous.
      if (field.identity && shared) out.id = item.id;
    }
    out.ensure = 'present';
    items.push(out);
  }
  return { items, pinned };
}

/** A listed value the file cannot hold (desired-schema.ts): an empty text, a role id that is not positive. */
function fieldProblem<K extends KindDeclaration>(kind: K, item: ActualOf<K>): string | undefined {
  const values = item as unknown as Readonly<Record<string, unknown>>;
  for (const [name, field] of stateFieldsOf(kind)) {
    if (field.identity) continue;
    if (field.type === 'text' && values[name] === '') return `its ${name} is empty`;
    if (field.type === 'roleIds' && (values[name] as readonly number[]).some((r) => !Number.isInteger(r) || r <= 0)) return 'a role id is not a positive integer';
  }
  return undefined;
}

/** The desired-state file's rules for a username or apikey name (src/desired/desired-schema.ts). */
function nameProblem(name: string): string | undefined {
  if (name === '') return 'its name is empty';
  if (name.trim() !== name) return 'its name has leading or trailing spaces';
  return undefined;
}

