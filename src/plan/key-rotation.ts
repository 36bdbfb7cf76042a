import type { ActualApikey, Change, DesiredApikey, Plan, PlanClock, PlanProblem } from '../model/index.js';
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
 * predecessor's delete once the overlap has passed.
 */
export function retiringKeys(actual: readonly ActualApikey[], clock: PlanClock | undefined): Map<number, { old: ActualApikey; successor: ActualApikey; since: number }> {
  const out = new Map<number, { old: ActualApikey; successor: ActualApikey; since: number }>();
  for (const [id, r] of clock?.rotating ?? []) {
    const old = actual.find((k) => k.id === id);
    const successor = actual.find((k) => k.id === r.successor);
    if (old !== undefined && successor !== undefined && old.name === successor.name) out.set(id, { old, successor, since: r.since });
  }
  return out;
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
    if (item.ensure !== 'present' || item.id !== undefined || item.mode === 'observe') continue;
    const source = item.source === undefined ? {} : { source: item.source };
    if (item.rotate === undefined) {
      // A successor made by `--replace` in a run killed before the old key's delete, found by the
      // next run (sync/interrupted-rotations.ts): its token is in the sink, the old key goes now.
      for (const r of retiring.values()) {
        if (r.successor.name !== item.name || !visible.some((k) => k.id === r.successor.id)) continue;
        changes.push({ kind: 'apikey', action: 'delete', key: r.old.name, id: r.old.id, fields: deleteFieldChanges(apikeyKind, r.old), reason: `${rotatedReason}: replaced by id ${r.successor.id}, whose token is in the sink`, ...source });
      }
      continue;
    }
    const carriers = visible.filter((k) => k.name === item.name);
    if (carriers.length > 1) {
      // A successor whose create the state file did not record: which one is "the" key is unknown.
      const ids = new Set(carriers.map((k) => k.id));
      changes = changes.filter((c) => !(c.kind === 'apikey' && c.action === 'delete' && c.id !== null && ids.has(c.id) && c.reason?.startsWith('duplicate of') === true));
      problems.push({ kind: 'apikey', key: item.name, code: 'ambiguous', ...source, message: `${carriers.length} apikeys are named "${item.name}" (ids ${[...ids].sort((a, b) => a - b).join(', ')}) and the state file records no rotation between them (a run that rotated it may have died before saving): nothing of it is deleted; check which token the sink holds and pin that key with \`id:\`` });
      continue;
    }
    const current = carriers[0];
    if (current === undefined || changes.some((c) => c.kind === 'apikey' && c.id === current.id && c.action === 'delete')) continue;
    const inRotation = [...retiring.values()].filter((r) => r.successor.id === current.id);
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
  const pairs = [...(clock.rotating ?? [])].filter(([old, r]) => byId.has(old) && byId.get(r.successor)?.name === byId.get(old)!.name);
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
    const overlaps = pairs.filter(([, r]) => r.successor === current.id);
    for (const [, r] of overlaps) ahead(r.since + item.rotate.overlapMs);
    const created = clock.createdAt?.('apikey', current.id);
    if (overlaps.length === 0 && created !== undefined) ahead(created + item.rotate.everyMs);
  }
  return next;
}
