import type { ActualOf, ActualState, FieldChange, Kind, KindDeclaration } from '../model/index.js';
import { apikeyKind, canonicalValue, identityOf, sameValue, sshUserKind, stateFieldsOf } from '../model/index.js';
import { compareStrings } from '../text/index.js';

/** One difference between two listings of the service, by remote id. */
export interface ServiceChange {
  readonly kind: Kind;
  readonly change: 'created' | 'deleted' | 'changed';
  readonly id: number;
  /** username or apikey name as the earlier listing had it (the later one for a created item). */
  readonly key: string;
  /** The fields that differ; empty for created and deleted items. */
  readonly fields: Readonly<Record<string, FieldChange>>;
}

const kindOrder = { sshUser: 0, apikey: 1 } as const;
const changeOrder = { deleted: 0, changed: 1, created: 2 } as const;

/**
 * What changed on the service between two complete listings: items created, deleted, or
 * changed in place (renames included), matched by id. It explains why a saved plan is stale,
 * so it must name every difference the state fingerprint covers, and nothing else.
 */
export function diffActualStates(before: ActualState, after: ActualState): ServiceChange[] {
  const out: ServiceChange[] = [];
  diffKind(sshUserKind, before.sshUsers, after.sshUsers, out);
  diffKind(apikeyKind, before.apikeys, after.apikeys, out);
  return out.sort(
    (a, b) => kindOrder[a.kind] - kindOrder[b.kind] || compareStrings(a.key, b.key) || a.id - b.id || changeOrder[a.change] - changeOrder[b.change],
  );
}

function diffKind<K extends KindDeclaration>(declaration: K, before: readonly ActualOf<K>[], after: readonly ActualOf<K>[], out: ServiceChange[]): void {
  const kind: Kind = declaration.kind;
  const identity = identityOf(declaration);
  const keyOf = (item: ActualOf<K>): string => item[identity] as string;
  const fieldsOf = (a: ActualOf<K>, b: ActualOf<K>) => listedFieldChanges(declaration, a, b);
  const earlier = byId(before);
  const later = byId(after);
  for (const [id, a] of earlier) {
    const b = later.get(id);
    if (!b) {
      out.push({ kind, change: 'deleted', id, key: keyOf(a), fields: {} });
      continue;
    }
    const fields = fieldsOf(a, b);
    if (Object.keys(fields).length > 0) out.push({ kind, change: 'changed', id, key: keyOf(a), fields });
  }
  for (const [id, b] of later) if (!earlier.has(id)) out.push({ kind, change: 'created', id, key: keyOf(b), fields: {} });
}

/** The listed fields that differ (the fingerprint's fields), in declaration order. */
export function listedFieldChanges<K extends KindDeclaration>(declaration: K, a: ActualOf<K>, b: ActualOf<K>): Record<string, FieldChange> {
  const fields: Record<string, FieldChange> = {};
  const x = a as unknown as Readonly<Record<string, unknown>>;
  const y = b as unknown as Readonly<Record<string, unknown>>;
  for (const [name, field] of stateFieldsOf(declaration)) {
    if (!sameValue(field, x[name], y[name])) fields[name] = { before: canonicalValue(field, x[name]), after: canonicalValue(field, y[name]) };
  }
  return fields;
}

/** The first listing of an id wins, as in the planner (an item listed twice counts once). */
function byId<T extends { id: number }>(items: readonly T[]): Map<number, T> {
  const map = new Map<number, T>();
  for (const item of items) if (!map.has(item.id)) map.set(item.id, item);
  return map;
}


/**
 * One line for people: `sshUser carol (id 12) was created`, `apikey ci (id 4): roles changed
 * [1] → [1, 2]`. Names are shown bare when they are plain words, JSON-quoted otherwise, so a
 * name from the service cannot carry a terminal escape or fake a second line.
 */
export function describeServiceChange(c: ServiceChange): string {
  const what = `${c.kind} ${shownName(c.key)} (id ${c.id})`;
  if (c.change === 'created') return `${what} was created`;
  if (c.change === 'deleted') return `${what} was deleted`;
  const parts = Object.entries(c.fields).map(([name, f]) => `${name} changed ${shownValue(f.before)} → ${shownValue(f.after)}`);
  return `${what}: ${parts.join(', ')}`;
}

export function shownName(name: string): string {
  return /^[A-Za-z0-9._@+-]+$/.test(name) ? name : JSON.stringify(name);
}

function shownValue(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(shownValue).join(', ')}]`;
  if (typeof value === 'string') return shownName(value);
  return String(value);
}

