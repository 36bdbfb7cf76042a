export { runSync } from './run-sync.js';
export { planPolicy } from './plan-policy.js';
export type { ApprovalAnswer, SyncInput, SyncOutcome } from './run-sync.js';
export { allApproved, approvalStatus, checkPolicy, policyRefusal } from './approvals.js';
export { applySavedPlan, checkDesiredFileHash, checkSavedPlan } from './apply-saved-plan.js';
export type { ApplySavedInput, ApplySavedOutcome } from './apply-saved-plan.js';
export { syncEvents } from './sync-events.js';
export type { WriteRunHooks } from './run-sync.js';
