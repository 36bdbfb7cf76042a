import type { FieldDeclaration } from './field.js';
import type { ActualOf, FieldName, IdentityFieldName, KindDeclaration, StateFieldName } from './kind.js';

// A kind's declaration never changes: its field lists are made once per kind and shared
// (frozen). The planner asks for them once per item compared, a fleet's no-op for every item
// of every target (issue 32: 3 % of a 500-target no-op was these lists made again).
const fieldLists = new WeakMap<KindDeclaration, readonly (readonly [string, FieldDeclaration])[]>();
const stateFieldLists = new WeakMap<KindDeclaration, readonly (readonly [string, FieldDeclaration])[]>();

/** A kind's fields in declaration order (the order written everywhere). */
export function fieldsOf<K extends KindDeclaration>(kind: K): readonly (readonly [FieldName<K>, FieldDeclaration])[] {
  let fields = fieldLists.get(kind);
  if (fields === undefined) {
    fields = Object.freeze(Object.entries(kind.fields).map((entry) => Object.freeze(entry)));
    fieldLists.set(kind, fields);
  }
  return fields as unknown as readonly (readonly [FieldName<K>, FieldDeclaration])[];
}

/** The listed fields (not write-only), in declaration order. */
export function stateFieldsOf<K extends KindDeclaration>(kind: K): readonly (readonly [StateFieldName<K>, FieldDeclaration])[] {
  let fields = stateFieldLists.get(kind);
  if (fields === undefined) {
    fields = Object.freeze(fieldsOf(kind).filter(([, field]) => !field.writeOnly));
    stateFieldLists.set(kind, fields);
  }
  return fields as unknown as readonly (readonly [StateFieldName<K>, FieldDeclaration])[];
}

/**
 * The fields an item may `ignore:` (never updated, never drift): the updatable ones that are
 * not its identity (a rename is `renamedFrom:`), in declaration order.
 */
export function ignorableFieldsOf<K extends KindDeclaration>(kind: K): readonly FieldName<K>[] {
  return fieldsOf(kind)
    .filter(([, field]) => field.updatable && field.identity !== true)
    .map(([name]) => name);
}

/** The identity field's name (`username`, `name`). */
export function identityOf<K extends KindDeclaration>(kind: K): IdentityFieldName<K> & StateFieldName<K> {
  const found = fieldsOf(kind).find(([, field]) => field.identity === true);
  if (found === undefined) throw new Error(`kind ${kind.kind} declares no identity field`);
  return found[0] as IdentityFieldName<K> & StateFieldName<K>;
}

/** Ids sorted and unique (a fresh array). */
export function sortedUnique(ids: readonly number[]): number[] {
  return [...new Set(ids)].sort((x, y) => x - y);
}

function isSortedUnique(ids: readonly number[]): boolean {
  for (let i = 1; i < ids.length; i += 1) if (!(ids[i - 1]! < ids[i]!)) return false;
  return true;
}

/** Whether two lists hold the same ids; without copying them when both are sorted and unique, as in a no-op plan. */
function sameIdSets(a: readonly number[], b: readonly number[]): boolean {
  if (isSortedUnique(a) && isSortedUnique(b)) return a.length === b.length && a.every((v, i) => v === b[i]);
  const x = sortedUnique(a);
  const y = sortedUnique(b);
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

/** Whether two values of a field are the same, by its comparison. */
export function sameValue(field: FieldDeclaration, a: unknown, b: unknown): boolean {
  return field.compare === 'set' ? sameIdSets(a as readonly number[], b as readonly number[]) : a === b;
}

/** A value as a plan, a saved plan and a fingerprint hold it: a set sorted and unique (a fresh copy). */
export function canonicalValue(field: FieldDeclaration, value: unknown): unknown {
  return field.compare === 'set' ? sortedUnique(value as readonly number[]) : value;
}

/**
 * An item as the state holds it: its id and listed fields, nothing else (a listed apikey's
 * token, a field the service added), in declaration order. `sorted`: sets sorted (a copy).
 */
export function listedItem<K extends KindDeclaration>(kind: K, item: ActualOf<K>, sorted = false): ActualOf<K> {
  const from = item as unknown as Readonly<Record<string, unknown>>;
  const out: Record<string, unknown> = { id: item.id };
  for (const [name, field] of stateFieldsOf(kind)) out[name] = sorted ? sortedValue(field, from[name]) : from[name];
  return out as ActualOf<K>;
}

/** The fingerprint's row of an item: `[id, ...listed fields]`, sets sorted (state/state-fingerprint.ts). */
export function listedRow<K extends KindDeclaration>(kind: K, item: ActualOf<K>): unknown[] {
  const from = item as unknown as Readonly<Record<string, unknown>>;
  const row: unknown[] = [item.id];
  for (const [name, field] of stateFieldsOf(kind)) row.push(sortedValue(field, from[name]));
  return row;
}

// Sorted, repeats kept: the bytes of fingerprints and saved plans made before (a listing is
// normalised to unique ids anyway, but the hash must not depend on that).
function sortedValue(field: FieldDeclaration, value: unknown): unknown {
  return field.compare === 'set' ? [...(value as readonly number[])].sort((x, y) => x - y) : value;
}
