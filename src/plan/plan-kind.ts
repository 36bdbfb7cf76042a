import type { Ensure, FieldChange, Kind, PlanProblem, SourcePosition } from '../model/index.js';
import { indexActual } from './index-actual.js';
import type { PlanBuilder } from './plan-builder.js';

/** What the generic matcher needs to know about one kind. */
export interface KindSpec<D extends DesiredItem, A extends { id: number }> {
  readonly kind: Kind;
  readonly noun: string;
  /** Usernames are unique on the service; apikey names are not. */
  readonly uniqueKeys: boolean;
  keyOf(item: A): string;
  /** The identity a declared item claims (username, name). */
  desiredKeyOf(item: D): string;
  /** Fields of a create, or a problem when the item cannot be created as declared. */
  createFields(item: D): { fields: Record<string, FieldChange> } | { problem: Omit<PlanProblem, 'kind'> };
  /** Field changes needed to make `actual` match `item`; empty when it matches. */
  updateFields(item: D, actual: A): { fields: Record<string, FieldChange>; reason?: string };
  deleteFields(actual: A): Record<string, FieldChange>;
}

export interface DesiredItem {
  readonly id?: number;
  readonly ensure: Ensure;
  readonly source?: PlanProblem['source'];
}

/** The one of several twins that is kept: the oldest, as the service numbers them (lowest id). */
function oldest<A extends { id: number }>(items: readonly A[]): A {
  return items.reduce((a, b) => (b.id < a.id ? b : a));
}

type Match<A> = { kind: 'found'; actual: A } | { kind: 'none' } | { kind: 'id_not_found' } | { kind: 'ambiguous'; ids: number[] };
const noMatch = { kind: 'none' } as const;
const idNotFound = { kind: 'id_not_found' } as const;

/**
 * Plans one kind: pinned ids claim their remote items first, then declared keys claim the
 * remaining items that carry them; whatever is left is unmanaged, or deleted under prune.
 */
export function planKind<D extends DesiredItem, A extends { id: number }>(
  spec: KindSpec<D, A>,
  desired: readonly D[],
  actual: readonly A[],
  prune: boolean,
  isProtected: (key: string) => boolean,
  out: PlanBuilder,
  deleteDuplicates = false,
  pruneSource?: SourcePosition,
): void {
  // Where the file asks for each change; set only when known, so a plan of a state built in
  // code (tests, export) carries no `source: undefined`.
  const from = (source: SourcePosition | undefined) => (source === undefined ? {} : { source });
  const index = indexActual(actual, (a) => spec.keyOf(a));
  const claimed = new Set<number>();
  // Only where names are not unique (apikeys): usernames cannot have twins.
  const resolveTwins = deleteDuplicates && !spec.uniqueKeys;
  // By desired index. At 100k items per kind, per-item allocations here are most of the
  // plan's CPU and memory (test/bench): no Map where an array does, no copies of lists.
  const matches: Match<A>[] = new Array<Match<A>>(desired.length);

  desired.forEach((item, i) => {
    if (item.id === undefined) return;
    const key = spec.desiredKeyOf(item);
    const found = index.byId.get(item.id);
    if (found) {
      claimed.add(found.id);
      matches[i] = { kind: 'found', actual: found };
    } else {
      // A mistyped pin must not turn the item the file names into an undeclared one that
      // prune deletes: whatever carries its key stays claimed (and untouched).
      for (const a of index.carriers(key)) claimed.add(a.id);
      matches[i] = idNotFound;
    }
  });
  desired.forEach((item, i) => {
    if (item.id !== undefined) return;
    const key = spec.desiredKeyOf(item);
    const carriers = index.carriers(key);
    const candidates = carriers.length === 1 && !claimed.has(carriers[0]!.id) ? carriers : carriers.filter((a) => !claimed.has(a.id));
    // Claim every candidate, even when ambiguous: an item the file names is never pruned.
    for (const a of candidates) claimed.add(a.id);
    if (candidates.length === 0) matches[i] = noMatch;
    else if (candidates.length === 1) matches[i] = { kind: 'found', actual: candidates[0]! };
    else if (resolveTwins) matches[i] = { kind: 'found', actual: oldest(candidates) };
    else matches[i] = { kind: 'ambiguous', ids: candidates.map((a) => a.id).sort((x, y) => x - y) };
  });
  // Twins: other remote items with a kept item's name, claimed by no declaration. Deleted as
  // duplicates (they were claimed above, so prune and "unmanaged" never see them).
  const twins: { twin: A; kept: A; source: SourcePosition | undefined }[] = [];
  if (resolveTwins) {
    const keptIds = new Set<number>();
    desired.forEach((item, i) => {
      const match = matches[i];
      if (item.ensure === 'present' && match?.kind === 'found') keptIds.add(match.actual.id);
    });
    desired.forEach((item, i) => {
      const match = matches[i];
      if (item.ensure !== 'present' || match?.kind !== 'found') return;
      for (const a of index.carriers(spec.keyOf(match.actual))) {
        if (keptIds.has(a.id) || twins.some((t) => t.twin.id === a.id)) continue;
        if (claimed.has(a.id) && item.id !== undefined) continue; // another declaration's
        claimed.add(a.id);
        twins.push({ twin: a, kept: match.actual, source: item.source });
      }
    });
  }

  // Where each remote item's key ends up after this plan (renames by pinned id), so that a
  // rename onto a name that another rename frees in the same run is allowed, and a rename
  // cycle (a swap), which no order of calls can apply, is reported.
  // null: the item is deleted by this plan, which frees its name (the apply step runs such a
  // rename after the deletes). An item that keeps its key has no entry: absent means "keeps it".
  const finalKey = new Map<number, string | null>();
  desired.forEach((item, i) => {
    const key = spec.desiredKeyOf(item);
    const match = matches[i]!;
    if (match.kind !== 'found') return;
    const remoteKey = spec.keyOf(match.actual);
    if (item.ensure === 'present' && key === remoteKey) return;
    const guarded = isProtected(remoteKey) || isProtected(key);
    if (item.ensure === 'present') {
      if (!guarded) finalKey.set(match.actual.id, key);
    } else if (!guarded) finalKey.set(match.actual.id, null);
  });
  if (prune) {
    for (const a of actual) if (!claimed.has(a.id) && !isProtected(spec.keyOf(a))) finalKey.set(a.id, null);
  }
  const renameBlocker = (id: number | null, target: string): string | undefined => {
    const seen = new Set<number>(id === null ? [] : [id]);
    let wanted = target;
    for (;;) {
      const holder = index.carriers(wanted).find((a) => !seen.has(a.id));
      if (!holder) {
        const cycle = id !== null && index.carriers(wanted).some((a) => a.id === id) && wanted !== target;
        return cycle ? 'the renames form a cycle; rename through a temporary name in two runs' : undefined;
      }
      const next = finalKey.get(holder.id);
      if (next === null) return undefined;
      if (next === undefined || next === wanted) return `id ${holder.id} already has that name`;
      seen.add(holder.id);
      wanted = next;
    }
  };

  // A blocked rename leaves its item under its current name, which may block another rename
  // or a create in turn: settle that to a fixed point (each pass blocks at least one more).
  const blocked = new Map<number, string>();
  if (spec.uniqueKeys) {
    for (let again = true; again; ) {
      again = false;
      desired.forEach((item, i) => {
        const key = spec.desiredKeyOf(item);
        const match = matches[i]!;
        if (match.kind !== 'found' || finalKey.get(match.actual.id) !== key || spec.keyOf(match.actual) === key || blocked.has(match.actual.id)) return;
        const why = renameBlocker(match.actual.id, key);
        if (why === undefined) return;
        blocked.set(match.actual.id, why);
        finalKey.delete(match.actual.id);
        again = true;
      });
    }
  }

  desired.forEach((item, i) => {
    const key = spec.desiredKeyOf(item);
    const match = matches[i]!;
    const source = item.source;
    if (match.kind === 'ambiguous') {
      out.problem({
        key,
        code: 'ambiguous',
        source,
        message: `${match.ids.length} remote ${spec.noun}s are named "${key}" (ids ${match.ids.join(', ')}); pin the one to manage with \`id:\``,
      });
      return;
    }
    if (item.ensure === 'absent') {
      if (match.kind !== 'found') {
        out.unchanged += 1;
        return;
      }
      const remoteKey = spec.keyOf(match.actual);
      if (isProtected(remoteKey) || isProtected(key)) {
        out.protected.push({ kind: spec.kind, key: remoteKey, id: match.actual.id });
        return;
      }
      out.change({ action: 'delete', key: remoteKey, id: match.actual.id, fields: spec.deleteFields(match.actual), reason: 'ensure: absent', ...from(source) });
      return;
    }
    if (match.kind === 'id_not_found') {
      out.problem({ key, code: 'id_not_found', source, message: `no remote ${spec.noun} has id ${item.id}; remove \`id:\` to create "${key}" anew` });
      return;
    }
    if (match.kind === 'none') {
      const taken = spec.uniqueKeys ? renameBlocker(null, key) : undefined;
      if (taken !== undefined) {
        out.problem({ key, code: 'identity_conflict', source, message: `cannot create ${spec.noun} "${key}": ${taken}` });
        return;
      }
      const created = spec.createFields(item);
      if ('problem' in created) out.problem(created.problem);
      else out.change({ action: 'create', key, id: null, fields: created.fields, ...from(source) });
      return;
    }
    const remote = match.actual;
    const { fields, reason } = spec.updateFields(item, remote);
    if (Object.keys(fields).length === 0) {
      out.unchanged += 1;
      return;
    }
    const remoteKey = spec.keyOf(remote);
    if (isProtected(remoteKey) || isProtected(key)) {
      out.protected.push({ kind: spec.kind, key: remoteKey, id: remote.id });
      return;
    }
    if (spec.uniqueKeys && remoteKey !== key) {
      const blocker = blocked.get(remote.id);
      if (blocker !== undefined) {
        out.problem({ key, code: 'identity_conflict', source, message: `cannot rename ${spec.noun} id ${remote.id} to "${key}": ${blocker}` });
        return;
      }
    }
    out.change({ action: 'update', key, id: remote.id, fields, reason, ...from(source) });
  });

  for (const { twin, kept, source } of twins) {
    const key = spec.keyOf(twin);
    if (isProtected(key)) out.protected.push({ kind: spec.kind, key, id: twin.id });
    else out.change({ action: 'delete', key, id: twin.id, fields: spec.deleteFields(twin), reason: `duplicate of id ${kept.id}, which is kept`, ...from(source) });
  }

  for (const a of actual) {
    if (claimed.has(a.id)) continue;
    claimed.add(a.id); // an item listed twice counts once
    const key = spec.keyOf(a);
    if (!prune) {
      out.unmanaged.push({ kind: spec.kind, key, id: a.id });
    } else if (isProtected(key)) {
      out.protected.push({ kind: spec.kind, key, id: a.id });
    } else {
      out.change({ action: 'delete', key, id: a.id, fields: spec.deleteFields(a), reason: 'prune: not declared', ...from(pruneSource) });
    }
  }
}
