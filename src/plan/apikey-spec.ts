import type { ActualApikey, DesiredApikey, FieldChange } from '../model/index.js';
import type { KindSpec } from './plan-kind.js';

/** Apikeys: names are not unique on the service; roles compare as sets of ids. */
export const apikeySpec: KindSpec<DesiredApikey, ActualApikey> = {
  kind: 'apikey',
  noun: 'apikey',
  uniqueKeys: false,
  keyOf: (a) => a.name,
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
    const want = sortedUnique(item.roles);
    const have = sortedUnique(actual.roles);
    if (!sameIds(want, have)) fields.roles = { before: have, after: want };
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

function sameIds(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}
