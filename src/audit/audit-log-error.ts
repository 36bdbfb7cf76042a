import { AmsyncError } from '../errors.js';
import { whyAndFix, type LocalPath } from '../secrets/index.js';

/**
 * The audit log could not take a line, or cannot be read. Stable codes; the caller decides
 * (a sync may stop before its next write): the log never drops a line silently.
 */
export type AuditLogErrorCode =
  /** The file (or its folder) could not be opened or created, or its mode could not be made 0600. */
  | 'audit_open_failed'
  /** The path is a symbolic link, a folder, a FIFO or a device: only a regular file is appended to. */
  | 'audit_not_regular_file'
  /** write(2) failed or wrote part of the line (ENOSPC, EDQUOT, EFBIG, EIO...). */
  | 'audit_write_failed'
  /** Renaming FILE to FILE.1 (or FILE.N to FILE.N+1) failed. */
  | 'audit_rotate_failed'
  /** record() after close(). */
  | 'audit_closed'
  /** An entry that cannot be a line (an attempt with a status, a result without one). */
  | 'audit_entry_invalid'
  /** `amsync audit`: the file cannot be read. */
  | 'audit_unreadable';

export class AuditLogError extends AmsyncError {
  declare readonly code: AuditLogErrorCode;

  constructor(code: AuditLogErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'AuditLogError';
  }
}

/** Words for a file-system error, without the absolute path Node puts in its messages. */
export function fsReason(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  switch (code) {
    case 'ENOENT':
      return 'no such file or folder';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a folder';
    case 'ENOTDIR':
      return 'a part of the path is not a folder';
    case 'ELOOP':
      return 'it is a symbolic link';
    case 'ENOSPC':
      return 'no space left on the device';
    case 'EDQUOT':
      return 'disk quota exceeded';
    case 'EROFS':
      return 'read-only file system';
    case 'ENXIO':
      return 'it is a FIFO or socket with no reader';
    default:
      return typeof code === 'string' ? code : error instanceof Error ? error.message : String(error);
  }
}

/**
 * `(--audit-log, AMSYNC_AUDIT_LOG, auditLog): the file system is read-only (EROFS); point
 * --audit-log at …`: a write or rotation the file system refused during a run, said as every
 * local path's failure is (src/secrets/local-path-error.ts): how the log is set, the errno in
 * words and the fix for that errno.
 */
export function auditPathProblem(error: unknown, path: string): string {
  const setting = auditLogSetting;
  const target: LocalPath = { what: 'the audit log', path, setting, knob: '--audit-log' };
  return `(${setting}): ${whyAndFix(error, target)}`;
}

/**
 * `--audit-log, AMSYNC_AUDIT_LOG, auditLog`: how the settings table sets the audit log. Written
 * here, not read from src/settings (audit/ sits below it); a unit test holds it to the table.
 */
export const auditLogSetting = '--audit-log, AMSYNC_AUDIT_LOG, auditLog';
