export { diffActualStates, describeServiceChange } from './state-diff.js';
export type { ServiceChange } from './state-diff.js';
export { passwordReferences, savedPlanFormatVersion, savedPlanKind, serialiseSavedPlan, toSavedPlan } from './saved-plan.js';
export type { PasswordReference, SavedPlan, SavedPlanInput, SavedPlanSettings } from './saved-plan.js';
export { parseSavedPlan, savedPlanSchema } from './saved-plan-schema.js';
export { StalePlanError } from './stale-plan-error.js';
export { maxPlanFileBytes, readSavedPlan, writeSavedPlan } from './saved-plan-file.js';
export { renderStaleMarkdown, staleMessage } from './render-stale.js';
export type { Staleness } from './render-stale.js';
