import type { ActualApikey, DesiredApikey } from '../model/index.js';
import { apikeyKind, identityOf } from '../model/index.js';
import { createFieldChanges, deleteFieldChanges, updateFieldChanges } from './field-changes.js';
import type { KindSpec } from './plan-kind.js';

const identity = identityOf(apikeyKind);

/** Apikeys (model/kinds/apikey.ts): names are not unique on the service; roles compare as sets of ids. */
export const apikeySpec: KindSpec<'apikey', DesiredApikey, ActualApikey> = {
  kind: 'apikey',
  noun: apikeyKind.noun,
  uniqueKeys: apikeyKind.uniqueIdentity,
  keyOf: (a) => a[identity],
  desiredKeyOf: (d) => d[identity],
  createFields: (item) => ({ fields: createFieldChanges(apikeyKind, item) }),
  updateFields(item, actual) {
    const { fields, renamed } = updateFieldChanges(apikeyKind, item, actual);
    // A rename by `renamedFrom:` is shown as such (Change.renamedFrom), not as one by id.
    return renamed && item.id !== undefined ? { fields, reason: 'rename by id' } : { fields, reason: undefined };
  },
  deleteFields: (a) => deleteFieldChanges(apikeyKind, a),
};
