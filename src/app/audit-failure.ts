import { AmsyncError } from '../errors.js';
import type { AuditTrail } from './audit-trail.js';

/**
 * Exit 1 when a result line could not be written: the writes happened, their record did not.
 * Apart from audit-trail.ts so that the commands load the audit log only when they write.
 */
export function throwOnAuditFailure(trail: AuditTrail | undefined): void {
  const failure = trail?.takeFailure();
  if (failure) throw new AmsyncError('audit_write_failed', `the changes were applied, but the audit log could not record every result: ${failure.message}`, { cause: failure });
}
