export { planPolicy, runSync } from './run-sync.js';
export type { SyncInput, SyncOutcome } from './run-sync.js';
export { applySavedPlan, checkDesiredFileHash, checkSavedPlan } from './apply-saved-plan.js';
export type { ApplySavedInput, ApplySavedOutcome } from './apply-saved-plan.js';
export { syncEvents } from './sync-events.js';
