export type { Logger } from './logger.js';
export type { AmsyncMetrics } from './metrics.js';
export type { ClientMetrics } from './metrics.js';
export { commandLogLevel, createLogger } from './logger.js';
export type { DaemonMetrics } from './metrics.js';
export type { RunOutcome } from './metrics.js';
export type { NotificationMetrics } from './metrics.js';
export type { NotificationOutcome } from './metrics.js';
