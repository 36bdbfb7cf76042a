import type { ActualState, DesiredApikey, DesiredSshUser, DesiredState, Kind } from '../model/index.js';

/** A declared item with what a selection needs of it: its kind, name, and the remote item it claims. */
export interface DeclaredItem {
  readonly kind: Kind;
  readonly key: string;
  readonly item: DesiredSshUser | DesiredApikey;
  /** The remote id it claims: its pin, else the one remote item with its name no pin claims. */
  readonly remoteId: number | undefined;
}

/**
 * Every declared item of both kinds with the remote id it claims, matched as the planner
 * matches (a pinned id, else the only remote item carrying its name that no pin claims). Two
 * remote apikeys with one name claim none here: the plan reports that ambiguity itself.
 */
export function declaredItems(desired: DesiredState, actual: ActualState): DeclaredItem[] {
  return [
    ...claims('sshUser', desired.sshUsers, (u) => u.username, actual.sshUsers, (a) => a.username),
    ...claims('apikey', desired.apikeys, (k) => k.name, actual.apikeys, (a) => a.name),
  ];
}

function claims<D extends DesiredSshUser | DesiredApikey, A extends { id: number }>(
  kind: Kind,
  desired: readonly D[],
  keyOf: (item: D) => string,
  actual: readonly A[],
  remoteKeyOf: (item: A) => string,
): DeclaredItem[] {
  const pinned = new Set(desired.flatMap((d) => (d.id === undefined ? [] : [d.id])));
  const byName = new Map<string, number | null>();
  for (const a of actual) {
    if (pinned.has(a.id)) continue;
    const name = remoteKeyOf(a);
    byName.set(name, byName.has(name) && byName.get(name) !== a.id ? null : a.id);
  }
  return desired.map((item) => {
    const byKey = byName.get(keyOf(item));
    return { kind, key: keyOf(item), item, remoteId: item.id ?? (typeof byKey === 'number' ? byKey : undefined) };
  });
}
