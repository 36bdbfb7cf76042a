export { applyPlan } from './apply-plan.js';
export type { ApplyOptions } from './apply-plan.js';
export type { ApikeyBody, PasswordRecorder, ServiceWriter, SshUserBody, WriteOutcome } from './service-writer.js';
export { schedule } from './schedule.js';
