/** Fleet: one desired file kept on many services (README, "Fleet: one access file, many services"). The CLI and the daemon use what is exported here. */
export type { Target, TargetCredentials, TargetOverrides, TargetsFile } from './target.js';
export { targetsFileSchema, targetSchema, type TargetsFileInput } from './targets-schema.js';
export { parseTargets, normaliseServiceUrl, type ParseTargetsContext, type ParseTargetsResult } from './parse-targets.js';
export { loadTargets, invalidTargets, type LoadedTargets, type LoadTargetsOptions } from './load-targets.js';
export { renderTargetsSchema } from './targets-json-schema.js';
export { desiredForTarget, parseSelectorFlag, selectTargets, type TargetFilter } from './select-targets.js';
export { perTargetStateFile, targetSettings } from './target-settings.js';
export { ordinalOf, ownedTargets, parseShard, shardOf, type Shard } from './rendezvous.js';
export { resolveShard, shardLease } from './shard.js';
export { ownedInput, type OwnedInput } from './owned-input.js';
export { runPool, Semaphore } from './pool.js';
export {
  classifyRun,
  errorOf,
  fleetExitCode,
  outcomeOfError,
  summarizeFleet,
  type FleetSummary,
  type TargetError,
  type TargetOutcome,
  type TargetRunOutcome,
  type TargetStatus,
} from './fleet-outcome.js';
export {
  fleetSummaryLine,
  renderFleetJson,
  renderFleetMarkdown,
  renderTargetText,
  notStartedTargetsLine,
  targetHeader,
  targetReport,
  toFleetJsonDocument,
  type FleetReportContext,
} from './render-fleet.js';
export {
  fleetPlanKind,
  isFleetPlanFile,
  parseFleetPlan,
  readFleetPlan,
  serialiseFleetPlan,
  writeFleetPlan,
  type SavedFleetPlan,
  type SavedTargetPlan,
} from './fleet-plan.js';
export { applyFleetPlan, runFleetSync, type FleetApplyInput, type FleetSyncInput, type FleetSyncResult } from './fleet-runs.js';
