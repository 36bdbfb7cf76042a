export { plan, withPasswordsAvailable } from './plan.js';
export type { PasswordFingerprints, PasswordPolicy, PlanPolicy } from './policy.js';
export { noFingerprints } from './policy.js';
export { checkSafety } from './safety.js';
export type { SafetyOptions } from './safety.js';
export { summarize } from './summary.js';
export { kindsWithoutWriteScope } from './scope-check.js';
