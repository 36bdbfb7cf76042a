/**
 * The application layer (one layer per folder; .dependency-cruiser.cjs says which may import which): what a run needs, built from explicit inputs, and the
 * steps that every front end shares. cli/ and daemon/ call it; it never imports them.
 */
export { createNotifier, createServiceContext, noUrlMessage, type ContextInputs, type ContextOverrides, type LogStream } from './service-context.js';
export {
  AppContextError,
  createAppContext,
  renewalGraceMs,
  type AppDeps,
  type ClientHandle,
  type LoadedDesiredState,
  type ServiceContext,
  type SyncOptions,
} from './app-context.js';
export { AuditTrail, planHashOf, type AuditHooks } from './audit-trail.js';
export type { AuditControlEntry } from '../audit/index.js';
export { throwOnAuditFailure } from './audit-failure.js';
export { checkCredentials, type CredentialNames, type WriteProbe } from './check-credentials.js';
export { checkLocalInputs } from './check-local-inputs.js';
export { checkLocalOutputs, localOutputsOf, settingWords, type LocalOutput, type PlannedOutputs } from './check-local-outputs.js';
export { checkFleetOutputs } from './check-fleet-outputs.js';
export { clientOptionsFrom, retryOptionsFrom } from './client-options.js';
export { observedService, type ServiceObserver, type WriteStart } from './observed-service.js';
export { notifyGraceMs } from './notify-run.js';
export { finishRun, type BodyEnd } from './finish-run.js';
export { exportState, writeWithBackpressure, type ChunkStream, type ExportRequest, type ExportStreams } from './export-state.js';
export { exportHeader, schemaFileName, schemaRefFor } from './export-header.js';
export { verifyRoundTrip } from './export-round-trip.js';
export { throwAfterRun, throwIfWithheld, throwOnFailures } from './exit-policy.js';
export { appendStepSummary, publishRefusal, publishReport, reportDocument, writeReportFile, type PublishOptions } from './publish-report.js';
export { savePlan, type PlanShape } from './save-plan.js';
export { planAndApply, planFileFor, type PlanAndApplyRequest } from './plan-and-apply.js';
export { checkSecretsMode, secretsModes, type SecretsMode } from './secrets-mode.js';
export { applySaved, checkSavedPlanFiles, confirmPlanService, hashIfReadable, sameService, savedPlanSource, type ApplySavedRequest } from './apply-saved.js';
export {
  checkFleetSinkNames,
  fileHashIfReadable,
  loadFleet,
  logTargetDone,
  onWire,
  runInTarget,
  savable,
  saveFleetPlan,
  validateFleet,
  type FleetSelection,
  type LoadedFleet,
} from './fleet-run.js';
export { applyFleetTargets, closeFleetNotifier, fleetExportSettings, fleetLogger, fleetTargetsRun, readFleetPlanChecked, syncFleetTargets, type FleetPlanRequest, type FleetSyncRequest, type FleetTargetsRun } from './fleet-targets.js';
export { fleetFailureLine, fleetRunEnd, publishFleetReport, renderFleetReport } from './fleet-report.js';
export { runDemo, type DemoRun, type DemoService } from './run-demo.js';
export { countsOf, isDesiredFinding, validateFiles, type ValidateRequest } from './validate-files.js';
export { readAudit, type ReadAuditRequest } from './read-audit.js';
export { savedPlanReport, syncReport } from './run-report.js';
export { interruptedAtPrompt, interruptedInstead, throwAfterReport } from './interrupt-outcome.js';
export { auditFilter, parseAuditAction, type AuditFilterFlags } from './audit-filter.js';
