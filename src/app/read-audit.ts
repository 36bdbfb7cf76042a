import { filterAuditLines, readAuditLog, type AuditFilter, type AuditReading } from '../audit/index.js';
import { UsageError } from '../errors.js';
import { loadSettings } from '../settings/index.js';

type Env = Readonly<Record<string, string | undefined>>;

export interface ReadAuditRequest {
  /** The log named on the command line; else the auditLog setting. */
  readonly file?: string | undefined;
  /** `--settings FILE`, whose auditLog names the log when no file is given. */
  readonly settingsFile?: string | undefined;
  /** Also the rotated files FILE.N … FILE.1, oldest first. */
  readonly includeRotated: boolean;
  readonly filter: AuditFilter;
}

/**
 * `amsync audit`: the audit log (README, "Teams and governance") read and filtered. Reads only the file, never
 * the service; a last line cut short (a crash, a full disk) is passed over and counted.
 */
export async function readAudit(request: ReadAuditRequest, env: Env): Promise<AuditReading> {
  const file = request.file ?? (await settingsAuditLog(request.settingsFile, env));
  const read = await readAuditLog(file, { includeRotated: request.includeRotated });
  return { ...read, lines: filterAuditLines(read.lines, request.filter), records: filterAuditLines(read.records, request.filter) };
}

async function settingsAuditLog(settingsFile: string | undefined, env: Env): Promise<string> {
  const settings = await loadSettings({ ...(settingsFile !== undefined ? { settingsFile } : {}), env });
  if (settings.auditLog === undefined) throw new UsageError('name the audit log: amsync audit FILE, or set AMSYNC_AUDIT_LOG (or auditLog in --settings FILE)', 'no_audit_log');
  return settings.auditLog;
}
