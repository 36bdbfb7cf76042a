import type { FieldDeclaration } from './field.js';
import type { FieldName, IdentityFieldName, KindDeclaration, StateFieldName } from './kind.js';

/** A kind's fields in declaration order (the order written everywhere). */
export function fieldsOf<K extends KindDeclaration>(kind: K): readonly (readonly [FieldName<K>, FieldDeclaration])[] {
  return Object.entries(kind.fields) as unknown as readonly (readonly [FieldName<K>, FieldDeclaration])[];
}

/** The listed fields (not write-only), in declaration order. */
export function stateFieldsOf<K extends KindDeclaration>(kind: K): readonly (readonly [StateFieldName<K>, FieldDeclaration])[] {
  return fieldsOf(kind).filter(([, field]) => !field.writeOnly) as unknown as readonly (readonly [StateFieldName<K>, FieldDeclaration])[];
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
