export { AuditLog, defaultAuditKeep, defaultAuditMaxBytes, processIdentity, type AuditLogNotice, type AuditLogOptions } from './audit-log.js';
export { AuditLogError, type AuditLogErrorCode } from './audit-log-error.js';
export {
  auditControlLineSchema,
  auditEvents,
  auditLineSchema,
  auditRecordSchema,
  isControlLine,
  type AuditControlEntry,
  type AuditControlLine,
  type AuditEvent,
  type AuditRecord,
  auditPhases,
  auditStatuses,
  auditTriggers,
  type AuditEntry,
  type AuditLine,
  type AuditPhase,
  type AuditProcess,
  type AuditStatus,
  type AuditTrigger,
  type AuditValue,
} from './audit-line.js';
export { auditFiles, parseAuditText, readAuditLog, type AuditReading } from './read-audit-log.js';
export { filterAuditLines, parseTimeBound, type AuditFilter } from './audit-filter.js';
export { revisionFromEnv, revisionVariables } from './revision-from-env.js';
export { auditTailBytes, readAuditTail } from './read-audit-tail.js';
