import type { ActualApikey, ActualSshUser, ActualState, FieldChange, Kind } from '../model/index.js';
import { compareStrings } from '../text/index.js';
import { sortedUnique } from '../plan/index.js';

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
  diffKind('sshUser', before.sshUsers, after.sshUsers, (u) => u.username, sshUserFields, out);
  diffKind('apikey', before.apikeys, after.apikeys, (k) => k.name, apikeyFields, out);
  return out.sort(
    (a, b) => kindOrder[a.kind] - kindOrder[b.kind] || compareStrings(a.key, b.key) || a.id - b.id || changeOrder[a.change] - changeOrder[b.change],
  );
}

function diffKind<T extends { id: number }>(
  kind: Kind,
  before: readonly T[],
  after: readonly T[],
  keyOf: (item: T) => string,
  fieldsOf: (a: T, b: T) => Record<string, FieldChange>,
  out: ServiceChange[],
): void {
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

function sshUserFields(a: ActualSshUser, b: ActualSshUser): Record<string, FieldChange> {
  const fields: Record<string, FieldChange> = {};
  if (a.username !== b.username) fields.username = { before: a.username, after: b.username };
  if (a.level !== b.level) fields.level = { before: a.level, after: b.level };
  return fields;
}

function apikeyFields(a: ActualApikey, b: ActualApikey): Record<string, FieldChange> {
  const fields: Record<string, FieldChange> = {};
  if (a.name !== b.name) fields.name = { before: a.name, after: b.name };
  if (a.superuser !== b.superuser) fields.superuser = { before: a.superuser, after: b.superuser };
  const ra = sortedUnique(a.roles);
  const rb = sortedUnique(b.roles);
  if (ra.length !== rb.length || ra.some((r, i) => r !== rb[i])) fields.roles = { before: ra, after: rb };
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

