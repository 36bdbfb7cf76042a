/**
 * The application layer (DESIGN.md §2): what a run needs, built from explicit inputs, and the
 * steps that every front end shares. cli/ and daemon/ call it; it never imports them.
 */
export {
  createNotifier,
  createServiceContext,
  noUrlMessage,
  renewalGraceMs,
  type ContextInputs,
  type ContextOverrides,
  type LoadedDesiredState,
  type LogStream,
  type ServiceContext,
  type SyncOptions,
} from './service-context.js';
export { AuditTrail, planHashOf, type AuditHooks } from './audit-trail.js';
export { throwOnAuditFailure } from './audit-failure.js';
export { checkCredentials, type CredentialNames, type WriteProbe } from './check-credentials.js';
export { checkLocalInputs } from './check-local-inputs.js';
export { checkLocalOutputs, localOutputsOf, settingWords, type LocalOutput, type PlannedOutputs } from './check-local-outputs.js';
export { checkFleetOutputs } from './check-fleet-outputs.js';
export { clientOptionsFrom, retryOptionsFrom } from './client-options.js';
export { observedService, type ServiceObserver, type WriteStart } from './observed-service.js';
export { notifyGraceMs } from './notify-run.js';
export { finishRun, type BodyEnd } from './finish-run.js';
