import type { ActualApikey, Change, DesiredApikey, ItemRef, Plan, PlanClock, PlanProblem } from '../model/index.js';
import { apikeyKind } from '../model/index.js';
import { createFieldChanges, deleteFieldChanges } from './field-changes.js';

/** How the reason of a successor's create begins (notifications tell these as `credential_rotated`). */
export const keyRotationReason = 'rotation:';

/** The reason of the delete of a rotated apikey's predecessor, once its overlap has passed. */
export const rotatedReason = 'rotated';

/**
 * The predecessors of apikeys in rotation (`rotate: {every, overlap}`) whose successor exists:
 * the state file says the two ids form one key, so the planner sees the successor only (the
 * twin is neither an ambiguity nor a duplicate to delete); `rotateKeys` plans the
 * predecessor's delete once the overlap has passed, `endedRotations` gives it the successor's
 * fate when the successor is no longer kept. A predecessor that a declaration pins with `id:`
 * is that declaration's key, not hidden; so is one whose successor is pinned `ensure: absent`.
 */
export function retiringKeys(actual: readonly ActualApikey[], clock: PlanClock | undefined, declared: readonly Pick<DesiredApikey, 'id' | 'ensure'>[] = []): Map<number, { old: ActualApikey; successor: ActualApikey; since: number }> {
  const out = new Map<number, { old: ActualApikey; successor: ActualApikey; since: number }>();
  if (clock?.rotating === undefined || clock.rotating.size === 0) return out;
  const pinned = new Set(declared.map((k) => k.id));
  // A successor pinned with `id:` and `ensure: absent`: that id goes, not the key; its predecessor is the key again.
  const droppedSuccessors = new Set(declared.filter((k) => k.ensure === 'absent').map((k) => k.id));
  const cycles = rotationCycles(clock.rotating);
  for (const [id, r] of clock.rotating) {
    if (pinned.has(id) || droppedSuccessors.has(r.successor) || cycles.has(id)) continue;
    const old = actual.find((k) => k.id === id);
    const successor = actual.find((k) => k.id === r.successor);
    if (old !== undefined && successor !== undefined && old.name === successor.name) out.set(id, { old, successor, since: r.since });
  }
  return out;
}

/**
 * The predecessors whose records lead back to themselves (5 -> 9 -> 5, or 5 -> 5): a
 * hand-edited or corrupted state file, since a successor is always a new key. Such records are
 * ignored: hidden behind one another, neither key would be seen and a third would be created.
 */
export function rotationCycles(rotating: ReadonlyMap<number, { readonly successor: number }> | undefined): Set<number> {
  const out = new Set<number>();
  for (const start of rotating?.keys() ?? []) {
    let id = rotating!.get(start)?.successor;
    for (let steps = 0; id !== undefined && id !== start && steps < rotating!.size; steps++) id = rotating!.get(id)?.successor;
    if (id === start) out.add(start);
  }
  return out;
}

/** The plan's note on rotation records that form a cycle (`rotationCycles`); none when there is none. */
export function rotationCycleNote(rotating: ReadonlyMap<number, { readonly successor: number }> | undefined): string[] {
  const ids = [...rotationCycles(rotating)].sort((a, b) => a - b);
  if (ids.length === 0) return [];
  return [`The state file's rotation records of apikey ids ${ids.join(', ')} form a cycle (each the successor of another; a hand-edited or corrupted state file): they are ignored, and the keys are planned as if no rotation were recorded.`];
}

/**
 * Rotations whose successor the plan does not keep (its name now `ensure: absent`, pruned,
 * expired, no longer declared, or protected): the predecessor, hidden from the planner as part
 * of the one key, shares the successor's fate and is shown beside it: deleted with it (the
 * reason of the successor's delete, so the safety checks and approvals count both), or listed
 * with it as unmanaged or protected. Pure.
 */
export function endedRotations(
  retiring: ReturnType<typeof retiringKeys>,
  plan: { readonly changes: readonly Change[]; readonly observed: readonly Change[]; readonly unmanaged: readonly ItemRef[]; readonly protected: readonly ItemRef[] },
): { changes: Change[]; observed: Change[]; unmanaged: ItemRef[]; protected: ItemRef[] } {
  const changes: Change[] = [];
  const observed: Change[] = [];
  const unmanaged: ItemRef[] = [];
  const protectedRefs: ItemRef[] = [];
  const has = (refs: readonly ItemRef[], id: number) => refs.some((r) => r.kind === 'apikey' && r.id === id);
  const deleteOf = (list: readonly Change[], id: number) => list.find((c) => c.kind === 'apikey' && c.action === 'delete' && c.id === id);
  // A chain (a key rotated again during its overlap: 5 -> 9 -> 12) ends as a whole: the
  // predecessor of a predecessor shares the fate too, with the first reason.
  const reasons = new Map<number, string>();
  const done = new Set<number>();
  for (let again = true; again; ) {
    again = false;
    for (const { old, successor } of retiring.values()) {
      if (done.has(old.id)) continue;
      // An observed item's delete is reported, not planned: the predecessor's with it.
      const planned = deleteOf(plan.changes, successor.id) ?? deleteOf(changes, successor.id);
      const deleted = planned ?? deleteOf(plan.observed, successor.id) ?? deleteOf(observed, successor.id);
      const ref: ItemRef = { kind: 'apikey', key: old.name, id: old.id };
      if (deleted !== undefined) {
        // Its own overlap may have passed already (rotateKeys planned its delete).
        if (deleteOf(plan.changes, old.id) !== undefined) {
          done.add(old.id);
          continue;
        }
        const source = deleted.source === undefined ? {} : { source: deleted.source };
        const reason = reasons.get(successor.id) ?? deleted.reason ?? 'deleted';
        reasons.set(old.id, reason);
        (planned === undefined ? observed : changes).push({ kind: 'apikey', action: 'delete', key: old.name, id: old.id, fields: deleteFieldChanges(apikeyKind, old), reason: `${reason}; predecessor of id ${successor.id} in rotation`, ...source });
      } else if (has(plan.unmanaged, successor.id) || has(unmanaged, successor.id)) unmanaged.push(ref);
      else if (has(plan.protected, successor.id) || has(protectedRefs, successor.id)) protectedRefs.push(ref);
      else continue;
      done.add(old.id);
      again = true;
    }
  }
  return { changes, observed, unmanaged, protected: protectedRefs };
}

/**
 * Scheduled apikey rotation, on the plan of the keys the planner saw (retiring ones hidden):
 * - a key whose token amsync created (else first saw) `every` ago or more gets a successor: a
 *   create with the declared fields (`replaces`: its id), its token written to the sink; with
 *   no overlap, the old key's delete follows in the same run (`replaced`, as `--replace`);
 * - a predecessor whose successor was created `overlap` ago or more is deleted (reason `rotated`);
 * - two keys of the name with no record of a rotation (a run that died before it saved the
 *   state file) are undecidable: nothing of the name is deleted, and the plan says so.
 * Pure: the time is the clock's.
 */
export function rotateKeys(plan: Pick<Plan, 'changes' | 'unchanged'>, declared: readonly DesiredApikey[], visible: readonly ActualApikey[], retiring: ReturnType<typeof retiringKeys>, clock: PlanClock | undefined): { changes: Change[]; unchanged: number; problems: PlanProblem[] } {
  let changes = [...plan.changes];
  let unchanged = plan.unchanged;
  const problems: PlanProblem[] = [];
  if (clock === undefined) return { changes, unchanged, problems };
  for (const item of declared) {
    if (item.ensure !== 'present' || item.mode === 'observe') continue;
    const source = item.source === undefined ? {} : { source: item.source };
    if (item.rotate === undefined || item.id !== undefined) {
      // The successor is the key and nothing rotates it any more: `rotate:` removed (or the
      // successor pinned with `id:`), or a successor made by `--replace` in a run killed before
      // the old key's delete, found by the next run (sync/interrupted-rotations.ts). Its token
      // is in the sink: the rotation ends, and the old key goes now. Unless another key has the
      // name with no record (the successor would be a duplicate to delete, and its predecessor
      // with it, while the unknown key is kept): undecidable, as below.
      const named = item.id === undefined ? visible.filter((k) => k.name === item.name) : [];
      if (named.length > 1 && named.some((k) => [...retiring.values()].some((r) => r.successor.id === k.id))) {
        changes = withoutDuplicateDeletes(changes, named);
        problems.push(ambiguity(item, named));
        continue;
      }
      for (const r of retiring.values()) {
        const isTheKey = item.id === undefined ? r.successor.name === item.name && visible.some((k) => k.id === r.successor.id) : item.id === r.successor.id;
        if (!isTheKey || changes.some((c) => c.kind === 'apikey' && c.action === 'delete' && c.id === r.old.id)) continue;
        changes.push({ kind: 'apikey', action: 'delete', key: r.old.name, id: r.old.id, fields: deleteFieldChanges(apikeyKind, r.old), reason: `${rotatedReason}: replaced by id ${r.successor.id}, whose token is in the sink`, ...source });
      }
      continue;
    }
    const carriers = visible.filter((k) => k.name === item.name);
    if (carriers.length > 1) {
      // A successor whose create the state file did not record: which one is "the" key is unknown.
      changes = withoutDuplicateDeletes(changes, carriers);
      problems.push(ambiguity(item, carriers));
      continue;
    }
    const current = carriers[0];
    if (current === undefined || changes.some((c) => c.kind === 'apikey' && c.id === current.id && c.action === 'delete')) continue;
    // Its predecessors, and theirs when it was rotated again during an overlap (5 -> 9 -> 12): each goes once its own overlap has passed.
    const chain = predecessorsOf(current.id, [...retiring.values()].map((r) => [r.old.id, r.successor.id] as const));
    const inRotation = [...retiring.values()].filter((r) => chain.has(r.successor.id));
    if (inRotation.length > 0) {
      for (const r of inRotation) {
        if (clock.now - r.since < item.rotate.overlapMs) continue;
        changes.push({ kind: 'apikey', action: 'delete', key: r.old.name, id: r.old.id, fields: deleteFieldChanges(apikeyKind, r.old), reason: rotatedReason, ...source });
      }
      continue;
    }
    const createdAt = clock.createdAt?.('apikey', current.id) ?? clock.now;
    if (clock.now - createdAt < item.rotate.everyMs) continue;
    // The successor carries every declared field: an update planned for the current key is moot.
    const update = changes.findIndex((c) => c.kind === 'apikey' && c.action === 'update' && c.id === current.id);
    if (update >= 0) changes = changes.filter((_, i) => i !== update);
    else unchanged -= 1;
    changes.push({ kind: 'apikey', action: 'create', key: item.name, id: null, fields: createFieldChanges(apikeyKind, item), reason: `${keyRotationReason} token created ${age(clock.now - createdAt)} ago, rotated every ${item.rotate.every}; replaces id ${current.id}`, replaces: current.id, ...source });
    if (item.rotate.overlapMs === 0) {
      changes.push({ kind: 'apikey', action: 'delete', key: current.name, id: current.id, fields: deleteFieldChanges(apikeyKind, current), reason: `${rotatedReason}: deleted once its successor exists and its token is written`, replaced: true, ...source });
    }
  }
  return { changes, unchanged, problems };
}

/** An age in the largest whole unit (`91d`, `5h`, `40s`). */
function age(ms: number): string {
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000]] as const) if (ms >= size) return `${Math.floor(ms / size)}${unit}`;
  return `${Math.floor(ms / 1000)}s`;
}

/**
 * When the next rotation falls due or an overlap ends (ms), after `clock.now`: the daemon wakes
 * for it as it does for an expiry. Over the keys as they are after a run (`{id, name}`), with the
 * state file's records; undefined when nothing is ahead. Pure.
 */
export function nextRotationAt(declared: readonly DesiredApikey[], keys: readonly Pick<ActualApikey, 'id' | 'name'>[], clock: PlanClock): number | undefined {
  const byId = new Map(keys.map((k) => [k.id, k]));
  const cycles = rotationCycles(clock.rotating);
  const pairs = [...(clock.rotating ?? [])].filter(([old, r]) => !cycles.has(old) && byId.has(old) && byId.get(r.successor)?.name === byId.get(old)!.name);
  const retiring = new Set(pairs.map(([old]) => old));
  let next: number | undefined;
  const ahead = (at: number) => {
    if (at > clock.now) next = Math.min(next ?? at, at);
  };
  for (const item of declared) {
    if (item.rotate === undefined || item.ensure !== 'present' || item.id !== undefined || item.mode === 'observe') continue;
    const carriers = keys.filter((k) => k.name === item.name && !retiring.has(k.id));
    if (carriers.length !== 1) continue;
    const current = carriers[0]!;
    const chain = predecessorsOf(current.id, pairs.map(([old, r]) => [old, r.successor] as const));
    const overlaps = pairs.filter(([, r]) => chain.has(r.successor));
    for (const [, r] of overlaps) ahead(r.since + item.rotate.overlapMs);
    const created = clock.createdAt?.('apikey', current.id);
    if (overlaps.length === 0 && created !== undefined) ahead(created + item.rotate.everyMs);
  }
  return next;
}

/**
 * An ambiguity of an apikey name counts the keys the planner saw: a predecessor in rotation,
 * hidden behind its successor, is named beside them, so that the plan shows every key of the
 * name (the one to pin is the one whose token the sink holds, usually the successor). Pure.
 */
export function withRetiringNamed(problems: readonly PlanProblem[], retiring: ReturnType<typeof retiringKeys>): PlanProblem[] {
  if (retiring.size === 0) return [...problems];
  return problems.map((p) => {
    if (p.kind !== 'apikey' || p.code !== 'ambiguous') return p;
    const hidden = [...retiring.values()].filter((r) => r.old.name === p.key).sort((a, b) => a.old.id - b.old.id);
    if (hidden.length === 0) return p;
    const also = hidden.map((r) => `id ${r.old.id}, the predecessor of id ${r.successor.id} in rotation, carries the name too`).join('; ');
    return { ...p, message: `${p.message}; ${also}` };
  });
}

/** The plan's deletes of `carriers` as duplicates of one another: none, when which one is "the" key is unknown. */
function withoutDuplicateDeletes(changes: readonly Change[], carriers: readonly ActualApikey[]): Change[] {
  const ids = new Set(carriers.map((k) => k.id));
  return changes.filter((c) => !(c.kind === 'apikey' && c.action === 'delete' && c.id !== null && ids.has(c.id) && c.reason?.startsWith('duplicate of') === true));
}

/** Several keys of a declared name and no record of a rotation between them: nothing of it is deleted. */
function ambiguity(item: DesiredApikey, carriers: readonly ActualApikey[]): PlanProblem {
  const ids = carriers.map((k) => k.id).sort((a, b) => a - b);
  const source = item.source === undefined ? {} : { source: item.source };
  return { kind: 'apikey', key: item.name, code: 'ambiguous', ...source, message: `${carriers.length} apikeys are named "${item.name}" (ids ${ids.join(', ')}) and the state file records no rotation between them (a run that rotated it may have died before saving): nothing of it is deleted; check which token the sink holds and pin that key with \`id:\`` };
}

/** `key` and the ids it replaced, transitively, over `[predecessor, successor]` pairs. */
function predecessorsOf(key: number, pairs: readonly (readonly [number, number])[]): Set<number> {
  const chain = new Set([key]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [old, successor] of pairs) {
      if (!chain.has(successor) || chain.has(old)) continue;
      chain.add(old);
      grew = true;
    }
  }
  return chain;
}
