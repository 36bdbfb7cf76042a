export { parseDesired, type ParseDesiredContext, type ParseDesiredResult, type Sections } from './parse-desired.js';
export { filesHash, loadDesired, readSecretFile, type LoadedDesired, type LoadedFile } from './load.js';
export { desiredFilesOf, desiredFoldersOf, maxDesiredFiles, type DesiredSource } from './desired-files.js';
export { mergeDesired, type DesiredPart } from './merge-desired.js';
export { secretFilesOf } from './secret-files.js';
export { stringifyDesired, stringifyDesiredChunks, stringifyDesiredPieces, type DesiredPiece, type StringifyDesiredOptions } from './stringify-desired.js';
export { desiredFileSchema, type DesiredFile, type DesiredFileInput } from './desired-schema.js';
export { renderAccessSchema } from './json-schema.js';
export { knownLevels } from './check-desired.js';
export { namesOf, resolveRoleNames, usesRoleNames, type RoleNameResolution } from './resolve-role-names.js';
export { desiredFromActual } from './desired-from-actual.js';
export { sameDeclaredItem } from './same-declared-item.js';
export type { DesiredFromActual, SkippedItem } from './desired-from-actual.js';
export {
  labelKeyPattern,
  labelsSchema,
  labelValuePattern,
  selectorMatches,
  targetNamePattern,
  targetNameSchema,
  type SelectableTarget,
} from './target-selector.js';
export type { MissingSecrets } from './resolve-passwords.js';
