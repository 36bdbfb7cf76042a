export type { Comparison, FieldDeclaration, ShownValueOf, ValueOf, ValueType, ValueTypes } from './field.js';
export type { ActualOf, BodyOf, DesiredFieldsOf, FieldChange, FieldChangesOf, FieldName, IdentityFieldName, KindDeclaration, NewOf, RequiredOnCreateName, StateFieldName, WriteOnlyFieldName } from './kind.js';
export { canonicalValue, fieldsOf, identityOf, ignorableFieldsOf, listedItem, listedRow, sameValue, sortedUnique, stateFieldsOf } from './kind-fields.js';
export { apikeyKind, type ApikeyKind } from './apikey.js';
export { sshUserKind, type SshUserKind } from './ssh-user.js';
export { kinds, type KindOf } from './kinds.js';
