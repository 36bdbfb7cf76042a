export { withPasswordsAvailable } from './plan.js';
// The plan of a run: the whole file's, then --replace and --only/--exclude (targeted-plan.ts).
export { plan } from './targeted-plan.js';
export type { ItemAddress, ItemSelection, SelectionFlags } from './item-selection.js';
export { replaceWord } from './item-selection.js';
export { changeSelected } from './select-items.js';
export type { PasswordFingerprints, PasswordPolicy, PlanPolicy } from './policy.js';
export type { GeneratedPasswordFacts, GeneratedRecord } from './policy.js';
export { noFingerprints } from './policy.js';
export { checkSafety } from './safety.js';
export type { SafetyOptions } from './safety.js';
export { summarize } from './summary.js';
export { kindsWithoutWriteScope } from './scope-check.js';
export { declaredItems } from './declared-items.js';
export { expiredReason } from './expiry-plan.js';
export { keyRotationReason, nextRotationAt, retiringKeys, rotatedReason } from './key-rotation.js';
