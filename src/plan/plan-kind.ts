import type { ChangeOf, Ensure, Kind, PlanClock, PlanProblem, SourcePosition } from '../model/index.js';
import { expiredNotCreatedNote, expiredReason, expiryOf, plannedExpiry } from './expiry-plan.js';
import { indexActual, type ActualIndex } from './index-actual.js';
import type { PlanBuilder } from './plan-builder.js';

/** What the generic matcher needs to know about one kind. */
/** A change's fields, typed by its kind's declaration. */
type Fields<N extends Kind> = ChangeOf<N>['fields'];

export interface KindSpec<N extends Kind, D extends DesiredItem, A extends { id: number }> {
  readonly kind: N;
  readonly noun: string;
  /** Usernames are unique on the service; apikey names are not. */
  readonly uniqueKeys: boolean;
  keyOf(item: A): string;
  /** The identity a declared item claims (username, name). */
  desiredKeyOf(item: D): string;
  /** Fields of a create, or a problem when the item cannot be created as declared. */
  createFields(item: D): { fields: Fields<N> } | { problem: Omit<PlanProblem, 'kind'> };
  /** Field changes needed to make `actual` match `item`; empty when it matches. */
  updateFields(item: D, actual: A): { fields: Fields<N>; reason?: string };
  deleteFields(actual: A): Fields<N>;
}

export interface DesiredItem {
  readonly id?: number;
  readonly ensure: Ensure;
  readonly source?: PlanProblem['source'];
  /** Former keys: a remote item carrying one, when none carries the key, is renamed in place. */
  readonly renamedFrom?: readonly string[];
  /** `observe`: its changes are reported (Plan.observed), never planned. */
  readonly mode?: 'observe';
  /** `expires:` / `ttl:` (expiry-plan.ts): past it, the item is deleted and never created. */
  readonly expires?: string;
  readonly ttl?: string;
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
export function planKind<N extends Kind, D extends DesiredItem, A extends { id: number }>(
  spec: KindSpec<N, D, A>,
  desired: readonly D[],
  actual: readonly A[],
  prune: boolean,
  isProtected: (key: string) => boolean,
  out: PlanBuilder<N>,
  deleteDuplicates = false,
  pruneSource?: SourcePosition,
  observeAll = false,
  clock?: PlanClock,
): void {
  const planner = new KindPlanner(spec, desired, actual, { prune, isProtected, deleteDuplicates: deleteDuplicates && !spec.uniqueKeys, pruneSource, observeAll, clock });
  planner.claimPinned();
  planner.claimByKey();
  planner.claimByFormerKey();
  planner.findTwins();
  planner.projectFinalKeys();
  planner.settleBlockedRenames();
  planner.emitDeclared(out);
  planner.emitTwins(out);
  planner.emitUndeclared(out);
}

interface PlannerOptions {
  readonly prune: boolean;
  readonly isProtected: (key: string) => boolean;
  /** Only where names are not unique (apikeys): usernames cannot have twins. */
  readonly deleteDuplicates: boolean;
  /** Where the file says `prune:` (the source of prune's deletes), with several files. */
  readonly pruneSource: SourcePosition | undefined;
  /** The whole kind is observed (a target with `mode: observe`): nothing is planned, all is reported. */
  readonly observeAll: boolean;
  /** The time of the plan and the creates `ttl:` counts from; absent: no item expires. */
  readonly clock: PlanClock | undefined;
}

// Where the file asks for each change; set only when known, so a plan of a state built in
// code (tests, export) carries no `source: undefined`.
const from = (source: SourcePosition | undefined) => (source === undefined ? {} : { source });

/** The phases of planKind, in order, over the state they share. */
class KindPlanner<N extends Kind, D extends DesiredItem, A extends { id: number }> {
  readonly #index: ActualIndex<A>;
  /** Remote ids some declaration (or twin resolution) claimed: never unmanaged, never pruned. */
  readonly #claimed = new Set<number>();
  // By desired index. At 100k items per kind, per-item allocations here are most of the
  // plan's CPU and memory (test/bench): no Map where an array does, no copies of lists.
  readonly #matches: Match<A>[];
  readonly #twins: { twin: A; kept: A; source: SourcePosition | undefined; item: D }[] = [];
  /**
   * Where each remote item's key ends up after this plan (renames by pinned id), so that a
   * rename onto a name that another rename frees in the same run is allowed, and a rename
   * cycle (a swap), which no order of calls can apply, is reported. null: the item is deleted
   * by this plan, which frees its name (the apply step runs such a rename after the deletes).
   * An item that keeps its key has no entry: absent means "keeps it".
   */
  readonly #finalKey = new Map<number, string | null>();
  /** Renames that cannot happen, by remote id, with why. */
  readonly #blocked = new Map<number, string>();
  /** By desired index: the former key a match was found by (`renamedFrom:`). */
  readonly #formerKeys = new Map<number, string>();

  constructor(
    private readonly spec: KindSpec<N, D, A>,
    private readonly desired: readonly D[],
    private readonly actual: readonly A[],
    private readonly options: PlannerOptions,
  ) {
    this.#index = indexActual(actual, (a) => spec.keyOf(a));
    this.#matches = new Array<Match<A>>(desired.length);
  }

  claimPinned(): void {
    this.desired.forEach((item, i) => {
      if (item.id === undefined) return;
      const found = this.#index.byId.get(item.id);
      if (found) {
        this.#claimed.add(found.id);
        this.#matches[i] = { kind: 'found', actual: found };
        return;
      }
      // A mistyped pin must not turn the item the file names into an undeclared one that
      // prune deletes: whatever carries its key stays claimed (and untouched).
      for (const a of this.#index.carriers(this.spec.desiredKeyOf(item))) this.#claimed.add(a.id);
      this.#matches[i] = idNotFound;
    });
  }

  claimByKey(): void {
    this.desired.forEach((item, i) => {
      if (item.id !== undefined) return;
      const carriers = this.#index.carriers(this.spec.desiredKeyOf(item));
      const candidates = carriers.length === 1 && !this.#claimed.has(carriers[0]!.id) ? carriers : carriers.filter((a) => !this.#claimed.has(a.id));
      // Claim every candidate, even when ambiguous: an item the file names is never pruned.
      for (const a of candidates) this.#claimed.add(a.id);
      if (candidates.length === 0) this.#matches[i] = noMatch;
      else if (candidates.length === 1) this.#matches[i] = { kind: 'found', actual: candidates[0]! };
      else if (this.options.deleteDuplicates) this.#matches[i] = { kind: 'found', actual: oldest(candidates) };
      else this.#matches[i] = { kind: 'ambiguous', ids: candidates.map((a) => a.id).sort((x, y) => x - y) };
    });
  }

  /**
   * `renamedFrom:`: an item no remote item carries the key of claims the one unclaimed remote
   * item that carries one of its former keys (file order), to be renamed on its id. After
   * every claim by key, so a declared key always wins over a former one. Several carriers of
   * one former key (apikey names are not unique) are an ambiguity, as for a key.
   */
  claimByFormerKey(): void {
    this.desired.forEach((item, i) => {
      if (item.renamedFrom === undefined || item.ensure !== 'present' || this.#matches[i] !== noMatch) return;
      for (const former of item.renamedFrom) {
        const candidates = this.#index.carriers(former).filter((a) => !this.#claimed.has(a.id));
        if (candidates.length === 0) continue;
        for (const a of candidates) this.#claimed.add(a.id);
        if (candidates.length === 1) {
          this.#matches[i] = { kind: 'found', actual: candidates[0]! };
          this.#formerKeys.set(i, former);
        } else this.#matches[i] = { kind: 'ambiguous', ids: candidates.map((a) => a.id).sort((x, y) => x - y) };
        return;
      }
    });
  }

  /** Whether a change of this declared item (undefined: an undeclared one) is only reported. */
  #observed(item: D | undefined): boolean {
    return this.options.observeAll || item?.mode === 'observe';
  }

  /** A change planned, or only reported when its item is observed. */
  #emit(item: D | undefined, out: PlanBuilder<N>, change: Omit<ChangeOf<N>, 'kind'>): void {
    if (this.#observed(item)) out.observe(change);
    else out.change(change);
  }

  /**
   * Twins: other remote items with a kept item's name, claimed by no declaration. Deleted as
   * duplicates (they are claimed here, so prune and "unmanaged" never see them).
   */
  findTwins(): void {
    if (!this.options.deleteDuplicates) return;
    const keptIds = new Set<number>();
    this.desired.forEach((item, i) => {
      const match = this.#matches[i];
      if (item.ensure === 'present' && match?.kind === 'found') keptIds.add(match.actual.id);
    });
    this.desired.forEach((item, i) => {
      const match = this.#matches[i];
      if (item.ensure !== 'present' || match?.kind !== 'found') return;
      for (const a of this.#index.carriers(this.spec.keyOf(match.actual))) {
        if (keptIds.has(a.id) || this.#twins.some((t) => t.twin.id === a.id)) continue;
        if (this.#claimed.has(a.id) && item.id !== undefined) continue; // another declaration's
        this.#claimed.add(a.id);
        this.#twins.push({ twin: a, kept: match.actual, source: item.source, item });
      }
    });
  }

  projectFinalKeys(): void {
    const { isProtected } = this.options;
    this.desired.forEach((item, i) => {
      const key = this.spec.desiredKeyOf(item);
      const match = this.#matches[i]!;
      if (match.kind !== 'found') return;
      const remoteKey = this.spec.keyOf(match.actual);
      if (item.ensure === 'present' && key === remoteKey) return;
      if (isProtected(remoteKey) || isProtected(key)) return;
      this.#finalKey.set(match.actual.id, item.ensure === 'present' ? key : null);
    });
    if (!this.options.prune) return;
    for (const a of this.actual) if (!this.#claimed.has(a.id) && !isProtected(this.spec.keyOf(a))) this.#finalKey.set(a.id, null);
  }

  /**
   * A blocked rename leaves its item under its current name, which may block another rename
   * or a create in turn: settle that to a fixed point (each pass blocks at least one more).
   */
  settleBlockedRenames(): void {
    if (!this.spec.uniqueKeys) return;
    for (let again = true; again; ) {
      again = false;
      this.desired.forEach((item, i) => {
        const key = this.spec.desiredKeyOf(item);
        const match = this.#matches[i]!;
        if (match.kind !== 'found' || this.#finalKey.get(match.actual.id) !== key || this.spec.keyOf(match.actual) === key || this.#blocked.has(match.actual.id)) return;
        const why = this.#renameBlocker(match.actual.id, key);
        if (why === undefined) return;
        this.#blocked.set(match.actual.id, why);
        this.#finalKey.delete(match.actual.id);
        again = true;
      });
    }
  }

  /** Why item `id` (null: a new one) cannot take the name `target` after this plan, if it cannot. */
  #renameBlocker(id: number | null, target: string): string | undefined {
    const seen = new Set<number>(id === null ? [] : [id]);
    let wanted = target;
    for (;;) {
      const holder = this.#index.carriers(wanted).find((a) => !seen.has(a.id));
      if (!holder) {
        const cycle = id !== null && this.#index.carriers(wanted).some((a) => a.id === id) && wanted !== target;
        return cycle ? 'the renames form a cycle; rename through a temporary name in two runs' : undefined;
      }
      const next = this.#finalKey.get(holder.id);
      if (next === null) return undefined;
      if (next === undefined || next === wanted) return `id ${holder.id} already has that name`;
      seen.add(holder.id);
      wanted = next;
    }
  }

  emitDeclared(out: PlanBuilder<N>): void {
    this.desired.forEach((item, i) => {
      const match = this.#matches[i]!;
      if (match.kind === 'ambiguous') this.#emitAmbiguous(item, match.ids, out);
      else if (item.ensure === 'absent') this.#emitAbsent(item, match, out);
      else if (match.kind === 'id_not_found') {
        out.problem({ key: this.spec.desiredKeyOf(item), code: 'id_not_found', source: item.source, message: `no remote ${this.spec.noun} has id ${item.id}; remove \`id:\` to create "${this.spec.desiredKeyOf(item)}" anew` });
      } else if (this.#emitExpired(item, match, out)) return;
      else if (match.kind === 'none') this.#emitCreate(item, out);
      else this.#emitUpdate(item, match.actual, out, this.#formerKeys.get(i));
    });
  }

  /**
   * An item with an expiry (`expires:` / `ttl:`): before it, listed in Plan.expiries and
   * planned as usual (false); past it, deleted with the reason `expired` when it exists, and
   * never created (true: nothing else is planned for it).
   */
  #emitExpired(item: D, match: Match<A>, out: PlanBuilder<N>): boolean {
    const clock = this.options.clock;
    if (clock === undefined || (item.expires === undefined && item.ttl === undefined)) return false;
    const found = match.kind === 'found' ? match.actual : undefined;
    const at = expiryOf(item, this.spec.kind, found?.id ?? null, clock);
    if (at === undefined) return false;
    const key = this.spec.desiredKeyOf(item);
    if (at > clock.now) {
      out.expiries.push(plannedExpiry(this.spec.kind, key, found?.id ?? null, at, clock.now));
      return false;
    }
    if (found === undefined) {
      out.notes.push(expiredNotCreatedNote(this.spec.noun, key, at));
      return true;
    }
    const remoteKey = this.spec.keyOf(found);
    if (this.options.isProtected(remoteKey) || this.options.isProtected(key)) out.protected.push({ kind: this.spec.kind, key: remoteKey, id: found.id });
    else this.#emit(item, out, { action: 'delete', key: remoteKey, id: found.id, fields: this.spec.deleteFields(found), reason: expiredReason, ...from(item.source) });
    return true;
  }

  #emitAmbiguous(item: D, ids: readonly number[], out: PlanBuilder<N>): void {
    const key = this.spec.desiredKeyOf(item);
    out.problem({ key, code: 'ambiguous', source: item.source, message: `${ids.length} remote ${this.spec.noun}s are named "${key}" (ids ${ids.join(', ')}); pin the one to manage with \`id:\`` });
  }

  #emitAbsent(item: D, match: Match<A>, out: PlanBuilder<N>): void {
    if (match.kind !== 'found') {
      out.unchanged += 1;
      return;
    }
    const remoteKey = this.spec.keyOf(match.actual);
    if (this.options.isProtected(remoteKey) || this.options.isProtected(this.spec.desiredKeyOf(item))) {
      out.protected.push({ kind: this.spec.kind, key: remoteKey, id: match.actual.id });
      return;
    }
    this.#emit(item, out, { action: 'delete', key: remoteKey, id: match.actual.id, fields: this.spec.deleteFields(match.actual), reason: 'ensure: absent', ...from(item.source) });
  }

  #emitCreate(item: D, out: PlanBuilder<N>): void {
    const key = this.spec.desiredKeyOf(item);
    const taken = this.spec.uniqueKeys ? this.#renameBlocker(null, key) : undefined;
    if (taken !== undefined) {
      out.problem({ key, code: 'identity_conflict', source: item.source, message: `cannot create ${this.spec.noun} "${key}": ${taken}` });
      return;
    }
    const created = this.spec.createFields(item);
    // An observed item is never created: what it would lack to be created is no problem.
    if ('problem' in created && this.#observed(item)) out.observe({ action: 'create', key, id: null, fields: {} as ChangeOf<N>['fields'], ...from(item.source) });
    else if ('problem' in created) out.problem(created.problem);
    else this.#emit(item, out, { action: 'create', key, id: null, fields: created.fields, ...from(item.source) });
  }

  #emitUpdate(item: D, remote: A, out: PlanBuilder<N>, formerKey?: string): void {
    const key = this.spec.desiredKeyOf(item);
    const { fields, reason } = this.spec.updateFields(item, remote);
    if (Object.keys(fields).length === 0) {
      out.unchanged += 1;
      return;
    }
    const remoteKey = this.spec.keyOf(remote);
    if (this.options.isProtected(remoteKey) || this.options.isProtected(key)) {
      out.protected.push({ kind: this.spec.kind, key: remoteKey, id: remote.id });
      return;
    }
    const blocker = this.spec.uniqueKeys && remoteKey !== key ? this.#blocked.get(remote.id) : undefined;
    if (blocker !== undefined) {
      out.problem({ key, code: 'identity_conflict', source: item.source, message: `cannot rename ${this.spec.noun} id ${remote.id} to "${key}": ${blocker}` });
      return;
    }
    this.#emit(item, out, { action: 'update', key, id: remote.id, fields, reason, ...(formerKey === undefined ? {} : { renamedFrom: formerKey }), ...from(item.source) });
  }

  emitTwins(out: PlanBuilder<N>): void {
    for (const { twin, kept, source, item } of this.#twins) {
      const key = this.spec.keyOf(twin);
      if (this.options.isProtected(key)) out.protected.push({ kind: this.spec.kind, key, id: twin.id });
      else this.#emit(item, out, { action: 'delete', key, id: twin.id, fields: this.spec.deleteFields(twin), reason: `duplicate of id ${kept.id}, which is kept`, ...from(source) });
    }
  }

  /** What no declaration claimed: unmanaged, or deleted under prune (protect globs aside). */
  emitUndeclared(out: PlanBuilder<N>): void {
    for (const a of this.actual) {
      if (this.#claimed.has(a.id)) continue;
      this.#claimed.add(a.id); // an item listed twice counts once
      const key = this.spec.keyOf(a);
      if (!this.options.prune) out.unmanaged.push({ kind: this.spec.kind, key, id: a.id });
      else if (this.options.isProtected(key)) out.protected.push({ kind: this.spec.kind, key, id: a.id });
      else this.#emit(undefined, out, { action: 'delete', key, id: a.id, fields: this.spec.deleteFields(a), reason: 'prune: not declared', ...from(this.options.pruneSource) });
    }
  }
}
