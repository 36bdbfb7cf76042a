import type { ActualState, Change } from '../model/index.js';

/**
 * The order of writes. Creates and updates run before deletes (README, "Safety"), all at once
 * unless one depends on another: usernames are unique, so a rename or create that takes a
 * name must wait for the write that frees it — a rename away (an earlier wave), or a delete
 * (then it runs after the deletes). Apikey names are not unique, so apikeys never wait.
 */
export interface ChangeOrder {
  /** Waves before the deletes; each wave runs concurrently, after the previous one. */
  readonly before: readonly (readonly number[])[];
  readonly deletes: readonly number[];
  /** Waves after the deletes. */
  readonly after: readonly (readonly number[])[];
  /** For each change index, the change index it waits for (to skip it if that one fails). */
  readonly dependsOn: ReadonlyMap<number, number>;
}

export function orderChanges(changes: readonly Change[], actual: ActualState): ChangeOrder {
  const holderOf = new Map<string, number>();
  for (const u of actual.sshUsers) holderOf.set(u.username, u.id);
  const deleteById = new Map<number, number>();
  const renameById = new Map<number, number>();
  changes.forEach((c, i) => {
    if (c.kind !== 'sshUser' || c.id === null) return;
    if (c.action === 'delete') deleteById.set(c.id, i);
    else if (c.action === 'update' && 'username' in c.fields) renameById.set(c.id, i);
  });

  const dependsOn = new Map<number, number>();
  const afterDeletes = new Set<number>();
  const level = new Map<number, number>();
  const levelOf = (i: number, depth = 0): number => {
    const known = level.get(i);
    if (known !== undefined) return known;
    const c = changes[i]!;
    let result = 0;
    const target = c.kind === 'sshUser' && c.action !== 'delete' ? targetName(c) : undefined;
    const holder = target === undefined ? undefined : holderOf.get(target);
    if (holder !== undefined && holder !== c.id && depth < changes.length) {
      const freeingDelete = deleteById.get(holder);
      if (freeingDelete !== undefined) {
        // If that delete fails, this write must not run: it would meet the old holder (409)
        // and adopt an item the file wants gone.
        afterDeletes.add(i);
        dependsOn.set(i, freeingDelete);
      } else {
        const renamer = renameById.get(holder);
        if (renamer !== undefined) {
          dependsOn.set(i, renamer);
          result = levelOf(renamer, depth + 1) + 1;
          if (afterDeletes.has(renamer)) afterDeletes.add(i);
        }
      }
    }
    level.set(i, result);
    return result;
  };

  // `--replace` of an apikey: the old key's delete waits for its successor's create (and, in
  // apply-plan, for the successor's token to be written): if either fails, the old key stays.
  changes.forEach((c, i) => {
    if (c.action !== 'delete' || c.replaced !== true) return;
    const successor = changes.findIndex((s) => s.kind === c.kind && s.action === 'create' && s.replaces === c.id);
    if (successor >= 0) dependsOn.set(i, successor);
  });

  const before: number[][] = [];
  const after: number[][] = [];
  const deletes: number[] = [];
  changes.forEach((c, i) => {
    if (c.action === 'delete') {
      deletes.push(i);
      return;
    }
    const l = levelOf(i);
    const waves = afterDeletes.has(i) ? after : before;
    while (waves.length <= l) waves.push([]);
    waves[l]!.push(i);
  });
  return { before: before.filter((w) => w.length > 0), deletes, after: after.filter((w) => w.length > 0), dependsOn };
}

function targetName(c: Change): string | undefined {
  if (c.action === 'create') return c.key;
  return 'username' in c.fields ? String(c.fields.username!.after) : undefined;
}

/**
 * The changes held back when `held` are not applied: those, and every change that waits for
 * one of them, directly or through another (a create that needs the name a held delete
 * frees, a rename that waits for it). Applying such a change anyway would meet the old
 * holder of the name (409) and adopt an item the file wants gone.
 */
export function heldWith(changes: readonly Change[], actual: ActualState, held: Iterable<number>): Set<number> {
  const out = new Set(held);
  if (out.size === 0) return out;
  const { dependsOn } = orderChanges(changes, actual);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [i, dep] of dependsOn) {
      if (out.has(dep) && !out.has(i)) {
        out.add(i);
        grew = true;
      }
    }
  }
  return out;
}
