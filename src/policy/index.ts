export { approvalHash, approvalHashLength, approvalSetHash, normaliseApproval } from './approval-hash.js';
export { checkDesiredPolicy } from './check-desired-policy.js';
export { reviewPlan } from './review-plan.js';
export { changesToWrite, matchApprovals, pendingGates, type ApprovalMatch } from './match-approvals.js';
