/**
 * The daemon (README, "Running as a sidecar"), of one service or of the targets of a targets file: one
 * Daemon (daemon.ts), a runner per target. Everything the CLI and tests use is exported here.
 */
export { startDaemon, type DaemonDeps, type RunningDaemon } from './one-service.js';
export type { DaemonOptions, DaemonRuntimeOptions } from './daemon-options.js';
export type { StopResult } from './daemon-lifecycle.js';
export { DaemonError, type DaemonErrorCode } from './daemon-error.js';
export type { DaemonMode, LoadedInput } from './reconciler.js';
export { liveness, readiness, defaultReadiness, type DaemonStatus, type Readiness, type ReadinessOptions } from './readiness.js';
export { retryDelay, defaultBackoff, type BackoffOptions } from './backoff.js';
export { parseListen, listenUrl, type ListenAddress } from './listen-address.js';
export { checkSchedule, cronSchedule, type Schedule, type ScheduleFactory } from './schedule.js';
export { watchFiles, type FileWatch, type FileWatchFactory, type FileWatchOptions } from './file-watch.js';
export { contentHash } from './content-hash.js';
export { SyncLoop, type RunVerdict, type TriggerReason } from './sync-loop.js';
export { Debouncer } from './debouncer.js';
export { summariseSync, type RunSummary } from './run-summary.js';
export type { SignalSource, DaemonSignal } from './signals.js';
export type { LeaseElector } from './lease-elector.js';
export { parseApprovals, readApprovalsFile, type ApprovalsRead } from './approvals-file.js';
export { pendingApprovalsOf, type PendingApproval, type PendingApprovalsEvent } from './pending-approvals.js';
export { startFleetDaemon, type FleetDaemonDeps, type FleetDaemonOptions, type FleetInput, type FleetStatus, type RunningFleetDaemon, type TargetReadiness } from './targets-file.js';
export type { TargetService, TargetSyncOptions } from './target-runner.js';
export { createTargetMetrics, type TargetMetrics } from './target-metrics.js';
export { serveDaemon } from './serve.js';
export type { DaemonRequest, FleetRequest } from './daemon-request.js';
export { attachClientMetrics } from './client-metrics.js';
export { auditTrigger, runSignal, stopWritesOf } from './target-runner.js';
export { runtimeOptions } from './daemon-options.js';
export { ctlSocketPath } from './ctl-socket-path.js';
export { sendCtlRequest } from './ctl-client.js';
export { ctlOps, type CtlLastRun, type CtlOp, type CtlRequest, type CtlResponse, type CtlStatus, type CtlTargetRun } from './ctl-protocol.js';
export { compileWindows, windowState, type SyncWindow, type WindowState, type OpenWindow } from './sync-windows.js';
export { ctlAnswerText, renderStatus } from './ctl-status-text.js';
