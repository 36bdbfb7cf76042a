import { readdir, readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { auditRecordSchema, isControlLine, type AuditLine, type AuditRecord } from './audit-line.js';
import { AuditLogError, fsReason } from './audit-log-error.js';

/** Lines of an audit log, and what was passed over. */
export interface AuditReading {
  /** The write lines, in file order (oldest first). */
  readonly lines: readonly AuditLine[];
  /** Every line, write lines and a daemon's control lines (suspend, resume, windows), in file order. */
  readonly records: readonly AuditRecord[];
  /**
   * Complete lines that are not audit lines: another program's, or a write cut short by a full
   * disk, closed with a newline when the log was next opened. Counted, not fatal.
   */
  readonly invalidLines: number;
  /**
   * A last line without its newline, ignored: a write cut short (a crash of an earlier
   * version, a full disk). The one write(2) per line keeps a kill from leaving one.
   */
  readonly partialLines: number;
  /** Where the first invalid or partial line is (1-based line number), for messages. */
  readonly firstProblem?: { readonly file: string; readonly line: number };
}

/** The text of one audit file -> its lines. Pure. */
export function parseAuditText(text: string, file = ''): AuditReading {
  const records: AuditRecord[] = [];
  let invalidLines = 0;
  let partialLines = 0;
  let firstProblem: { file: string; line: number } | undefined;
  const parts = text.split('\n');
  // After the last "\n" comes "" for a whole file, or the partial line.
  const tail = parts.pop() ?? '';
  parts.forEach((part, index) => {
    if (part.trim() === '') return;
    const line = parseLine(part);
    if (line) records.push(line);
    else {
      invalidLines += 1;
      firstProblem ??= { file, line: index + 1 };
    }
  });
  if (tail !== '') {
    partialLines = 1;
    firstProblem ??= { file, line: parts.length + 1 };
  }
  return { lines: writeLines(records), records, invalidLines, partialLines, ...(firstProblem ? { firstProblem } : {}) };
}

function writeLines(records: readonly AuditRecord[]): AuditLine[] {
  return records.filter((r): r is AuditLine => !isControlLine(r));
}

function parseLine(text: string): AuditRecord | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = auditRecordSchema.safeParse(json);
  return parsed.success ? parsed.data : undefined;
}

/**
 * The files of the log at `path`, oldest first: with `includeRotated`, FILE.N … FILE.1 that
 * exist (whatever `keep` wrote them), then FILE.
 */
export async function auditFiles(path: string, includeRotated: boolean): Promise<string[]> {
  if (!includeRotated) return [path];
  const name = basename(path);
  let entries: string[];
  try {
    entries = await readdir(dirname(path));
  } catch (error) {
    throw new AuditLogError('audit_unreadable', `cannot read the folder of the audit log ${path}: ${fsReason(error)}`, { cause: error });
  }
  const rotated = entries
    .map((entry) => (entry.startsWith(`${name}.`) ? /^[1-9]\d{0,5}$/.exec(entry.slice(name.length + 1)) : null))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => Number(match[0]))
    .sort((a, b) => b - a);
  const files = rotated.map((n) => join(dirname(path), `${name}.${n}`));
  return entries.includes(name) || files.length === 0 ? [...files, path] : files;
}

/** Reads the log at `path` (and its rotated files), oldest line first. Throws AuditLogError `audit_unreadable`. */
export async function readAuditLog(path: string, options: { readonly includeRotated?: boolean } = {}): Promise<AuditReading & { readonly files: readonly string[] }> {
  const files = await auditFiles(path, options.includeRotated === true);
  const records: AuditRecord[] = [];
  let invalidLines = 0;
  let partialLines = 0;
  let firstProblem: AuditReading['firstProblem'];
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      throw new AuditLogError('audit_unreadable', `cannot read the audit log ${file}: ${fsReason(error)}`, { cause: error });
    }
    const reading = parseAuditText(text, file);
    for (const record of reading.records) records.push(record);
    invalidLines += reading.invalidLines;
    partialLines += reading.partialLines;
    firstProblem ??= reading.firstProblem;
  }
  return { files, lines: writeLines(records), records, invalidLines, partialLines, ...(firstProblem ? { firstProblem } : {}) };
}
