import type { ActualApikey, DesiredApikey, FieldChange } from '../model/index.js';
import type { KindSpec } from './plan-kind.js';

/** Apikeys: names are not unique on the service; roles compare as sets of ids. */
export const apikeySpec: KindSpec<DesiredApikey, ActualApikey> = {
  kind: 'apikey',
  noun: 'apikey',
  uniqueKeys: false,
  keyOf: (a) => a.name,
  desiredKeyOf: (d) => d.name,
  createFields: (item) => ({
    fields: {
      name: { before: null, after: item.name },
      superuser: { before: null, after: item.superuser },
      roles: { before: null, after: sortedUnique(item.roles) },
    },
  }),
  updateFields(item, actual) {
    const fields: Record<string, FieldChange> = {};
    let reason: string | undefined;
    if (actual.name !== item.name) {
      fields.name = { before: actual.name, after: item.name };
      reason = 'rename by id';
    }
    if (actual.superuser !== item.superuser) fields.superuser = { before: actual.superuser, after: item.superuser };
    if (!sameIdSets(item.roles, actual.roles)) fields.roles = { before: sortedUnique(actual.roles), after: sortedUnique(item.roles) };
    return { fields, reason };
  },
  deleteFields: (a) => ({
    name: { before: a.name, after: null },
    superuser: { before: a.superuser, after: null },
    roles: { before: sortedUnique(a.roles), after: null },
  }),
};

export function sortedUnique(ids: readonly number[]): number[] {
  return [...new Set(ids)].sort((x, y) => x - y);
}

/** Whether two lists hold the same ids; without copying them when both are sorted and unique, as in a no-op plan. */
function sameIdSets(a: readonly number[], b: readonly number[]): boolean {
  if (isSortedUnique(a) && isSortedUnique(b)) return a.length === b.length && a.every((v, i) => v === b[i]);
  const x = sortedUnique(a);
  const y = sortedUnique(b);
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

function isSortedUnique(ids: readonly number[]): boolean {
  for (let i = 1; i < ids.length; i += 1) if (!(ids[i - 1]! < ids[i]!)) return false;
  return true;
}
