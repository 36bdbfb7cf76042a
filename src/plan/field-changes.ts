import type { ActualOf, FieldChange, FieldChangesOf, KindDeclaration } from '../model/index.js';
import { canonicalValue, fieldsOf, identityOf, sameValue, SENSITIVE, stateFieldsOf } from '../model/index.js';

// A change's fields are built here, from the kind's declaration, in its order (which is part
// of saved plans' bytes): every field once, a sensitive one as SENSITIVE, a set sorted.

type Writable = Record<string, FieldChange>;

/** A create: every declared field the item has, before null. */
export function createFieldChanges<K extends KindDeclaration>(kind: K, declared: object): FieldChangesOf<K> {
  const out: Writable = {};
  const item = declared as Readonly<Record<string, unknown>>;
  for (const [name, field] of fieldsOf(kind)) {
    const value = item[name];
    if (value === undefined) continue;
    out[name] = { before: null, after: field.sensitive ? SENSITIVE : canonicalValue(field, value) };
  }
  return out as FieldChangesOf<K>;
}

/**
 * An update: each listed, updatable field that differs by its comparison, but those the item
 * `ignore:`s. A write-only field is the kind's own business (the SSH password: spec).
 * `renamed` when the identity differs.
 */
export function updateFieldChanges<K extends KindDeclaration>(kind: K, declared: object, actual: ActualOf<K>): { fields: FieldChangesOf<K>; renamed: boolean } {
  const out: Writable = {};
  const remote = actual as unknown as Readonly<Record<string, unknown>>;
  const item = declared as Readonly<Record<string, unknown>> & { readonly ignore?: readonly string[] };
  for (const [name, field] of stateFieldsOf(kind)) {
    if (!field.updatable || item.ignore?.includes(name) === true || sameValue(field, remote[name], item[name])) continue;
    out[name] = { before: canonicalValue(field, remote[name]), after: canonicalValue(field, item[name]) };
  }
  return { fields: out as FieldChangesOf<K>, renamed: identityOf(kind) in out };
}

/** A delete: every listed field, after null. */
export function deleteFieldChanges<K extends KindDeclaration>(kind: K, actual: ActualOf<K>): FieldChangesOf<K> {
  const out: Writable = {};
  const remote = actual as unknown as Readonly<Record<string, unknown>>;
  for (const [name, field] of stateFieldsOf(kind)) out[name] = { before: canonicalValue(field, remote[name]), after: null };
  return out as FieldChangesOf<K>;
}
