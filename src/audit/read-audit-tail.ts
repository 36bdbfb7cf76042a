import { open } from 'node:fs/promises';
import { AuditLogError, fsReason } from './audit-log-error.js';
import type { AuditLine } from './audit-line.js';
import { parseAuditText } from './read-audit-log.js';

/** Bytes read from the end of the log at most: 50 lines of a few hundred bytes fit many times over. */
export const auditTailBytes = 256 * 1024;

/**
 * The last `count` lines of the audit log at `path` (oldest first), reading at most `maxBytes`
 * from its end: a log of many megabytes costs a status page no more than a small one. The
 * first line of the window may be cut (it began before it) and is dropped unless the window
 * starts the file; a partial last line is passed over as readAuditLog does. The rotated files
 * are not read. A missing file is no lines (the daemon has not written yet). Throws
 * AuditLogError `audit_unreadable`.
 */
export async function readAuditTail(path: string, count: number, maxBytes = auditTailBytes): Promise<readonly AuditLine[]> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new AuditLogError('audit_unreadable', `cannot read the audit log ${path}: ${fsReason(error)}`, { cause: error });
  }
  try {
    const { size } = await handle.stat();
    const start = Math.max(0, size - maxBytes);
    const buffer = Buffer.alloc(size - start);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, start);
    let text = buffer.subarray(0, bytesRead).toString('utf8');
    if (start > 0) text = text.slice(text.indexOf('\n') + 1);
    const lines = parseAuditText(text, path).lines;
    return lines.slice(Math.max(0, lines.length - count));
  } catch (error) {
    throw new AuditLogError('audit_unreadable', `cannot read the audit log ${path}: ${fsReason(error)}`, { cause: error });
  } finally {
    await handle.close();
  }
}
