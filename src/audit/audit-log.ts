import { closeSync, constants, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync, readSync, renameSync, writeSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { dirname } from 'node:path';
import { isSecret, scrubbedJson } from '../secrets/index.js';
import { auditEvents, auditPhases, auditStatuses, type AuditControlEntry, type AuditControlLine, type AuditEntry, type AuditLine, type AuditProcess, type AuditValue } from './audit-line.js';
import { AuditLogError, auditLogSetting, auditPathProblem, fsReason } from './audit-log-error.js';

export interface AuditLogOptions {
  /** Before a line would take the file past this size, it is rotated. @default 10485760 (10 MiB) */
  readonly maxBytes?: number;
  /** Rotated files kept besides the live one: FILE.1 (the newest) to FILE.keep. @default 5 */
  readonly keep?: number;
  /** Who writes. @default processIdentity() */
  readonly identity?: AuditProcess;
  /** The revision being applied, usually revisionFromEnv(env); null when unknown. No default: the caller says. */
  readonly revision: string | null;
  /** Wall-clock epoch milliseconds, for `time`. @default Date.now */
  readonly now?: () => number;
}

/** Something open() found and repaired; the caller may log it. */
export type AuditLogNotice =
  /** The file was readable by others; its mode was set to 0600. */
  | { readonly code: 'mode_tightened'; readonly path: string; readonly previousMode: number }
  /** The file ended in a partial line (a crash of an earlier version, a full disk); it was closed with a newline. */
  | { readonly code: 'partial_line_closed'; readonly path: string };

export const defaultAuditMaxBytes = 10 * 1024 * 1024;
export const defaultAuditKeep = 5;

// O_NOFOLLOW: a symbolic link planted where the log goes would redirect our appends. O_NONBLOCK:
// opening a FIFO with no reader fails (ENXIO) instead of hanging; on a regular file it does nothing.
const appendFlags = constants.O_APPEND | constants.O_CREAT | constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const readFlags = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * The append-only JSON-lines audit log of every write (README, "Teams and governance"): one line before a write
 * is sent, one after it ended. Each line is one JSON object and the write(2) that appends it
 * (O_APPEND, one Buffer ending in "\n"): a process killed at any moment leaves whole lines
 * behind, never half of one followed by another. The file is 0600: lines name users and keys
 * and who changed them. Every line passes the one redaction step (`scrub`) before it is
 * written, and a line never holds a password or a token in the first place.
 *
 * Rotation is by size and hand-written rather than rotating-file-stream's: we need every line
 * whole in one write(2) (a stream may split a chunk across writes, and buffers lines a kill
 * would lose), the write to fail loudly and synchronously to the caller before the change it
 * records is sent, and 0600 on every file, rotated ones included.
 *
 * One process at a time should write a file (the writer lock gives that per state file). If
 * another one rotates or moves it anyway, the next line notices (the path no longer names the
 * open file) and goes to the new file.
 */
export class AuditLog {
  readonly path: string;
  readonly #maxBytes: number;
  readonly #keep: number;
  readonly #identity: AuditProcess;
  readonly #revision: string | null;
  readonly #now: () => number;
  readonly #notices: AuditLogNotice[] = [];
  #fd: number | undefined;
  #closed = false;

  private constructor(path: string, options: AuditLogOptions) {
    this.path = path;
    this.#maxBytes = options.maxBytes ?? defaultAuditMaxBytes;
    this.#keep = options.keep ?? defaultAuditKeep;
    if (!Number.isInteger(this.#maxBytes) || this.#maxBytes < 1) throw new TypeError(`Expected \`maxBytes\` to be a whole number from 1 upwards, got ${String(options.maxBytes)}`);
    if (!Number.isInteger(this.#keep) || this.#keep < 1) throw new TypeError(`Expected \`keep\` to be a whole number from 1 upwards, got ${String(options.keep)}`);
    this.#identity = options.identity ?? processIdentity();
    this.#revision = options.revision;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Opens (creating it, and its folder, when missing) the log at `path` for appending. A file
   * readable by others is made 0600 and said so in `notices`, rather than refused: the file is
   * ours to append to, and refusing would stop every write of a sidecar over a mode an
   * operator's `touch` left; only one we may not chmod (another user's) is refused.
   * Throws AuditLogError.
   */
  static open(path: string, options: AuditLogOptions): AuditLog {
    const log = new AuditLog(path, options);
    log.#fd = log.#openFile();
    return log;
  }

  /** What opening (and reopening after a rotation) found and repaired. */
  get notices(): readonly AuditLogNotice[] {
    return this.#notices;
  }

  /**
   * Appends one line, synchronously: when it returns, the line is in the file (in the page
   * cache: a kill cannot lose it, a power cut can). Throws AuditLogError (`audit_write_failed`,
   * `audit_rotate_failed`...) when it is not; nothing is ever dropped silently. Returns the
   * line as written (redacted).
   */
  record(entry: AuditEntry): AuditLine {
    if (this.#closed) throw new AuditLogError('audit_closed', `the audit log ${this.path} is closed`);
    const text = scrubbedJson(this.#line(entry));
    this.#append(Buffer.from(`${text}\n`, 'utf8'));
    return JSON.parse(text) as AuditLine;
  }

  /**
   * Appends one control line of a daemon (suspended, resumed, a window closing or opening, an
   * override): its own shape, with `event` and no write fields. Same guarantees as record().
   */
  recordControl(entry: AuditControlEntry, target: string | null): AuditControlLine {
    if (this.#closed) throw new AuditLogError('audit_closed', `the audit log ${this.path} is closed`);
    if (!(auditEvents as readonly string[]).includes(entry.event)) throw invalid(`event must be one of ${auditEvents.join(', ')}, got ${String(entry.event)}`);
    const line: AuditControlLine = {
      time: new Date(this.#now()).toISOString(),
      event: entry.event,
      target,
      reason: entry.reason,
      uid: Number.isInteger(entry.uid) ? entry.uid : null,
      revision: this.#revision,
      process: this.#identity,
    };
    const text = scrubbedJson(line);
    this.#append(Buffer.from(`${text}\n`, 'utf8'));
    return JSON.parse(text) as AuditControlLine;
  }

  close(): void {
    this.#closed = true;
    this.#closeFd();
  }

  #line(entry: AuditEntry): AuditLine {
    if (!(auditPhases as readonly string[]).includes(entry.phase)) throw invalid(`phase must be attempt or result, got ${String(entry.phase)}`);
    if (entry.phase === 'attempt' && entry.status !== undefined) throw invalid('an attempt has no status');
    if (entry.phase === 'result' && !(auditStatuses as readonly string[]).includes(entry.status ?? '')) throw invalid('a result needs a status: applied, failed or skipped');
    return {
      time: new Date(this.#now()).toISOString(),
      target: entry.target,
      kind: entry.kind,
      key: entry.key,
      id: entry.id,
      action: entry.action,
      phase: entry.phase,
      status: entry.status ?? null,
      error: errorCode(entry.error),
      fields: [...entry.fields],
      values: safeValues(entry.values),
      planHash: entry.planHash,
      trigger: entry.trigger,
      // Only when there is one: lines without it stay byte for byte as they were.
      ...(entry.reason === undefined ? {} : { reason: entry.reason }),
      revision: this.#revision,
      process: this.#identity,
    };
  }

  #append(bytes: Buffer): void {
    const current = this.#current();
    let fd = current.fd;
    if (current.size > 0 && current.size + bytes.length > this.#maxBytes) {
      this.#rotate();
      fd = this.#current().fd;
    }
    let written: number;
    try {
      written = writeSync(fd, bytes, 0, bytes.length);
    } catch (error) {
      this.#closeFd();
      throw new AuditLogError('audit_write_failed', `could not append to the audit log ${this.path} ${auditPathProblem(error, this.path)}`, { cause: error });
    }
    if (written !== bytes.length) {
      // Part of the line is in the file. It stays (an audit log is never cut), and the next
      // open closes it with a newline, so the lines after it stay whole; readers count it.
      this.#closeFd();
      throw new AuditLogError('audit_write_failed', `could not append to the audit log ${this.path} (${auditLogSetting}): wrote ${written} of ${bytes.length} bytes (a full disk or a file-size limit?); free space, or point --audit-log at another disk`);
    }
  }

  /**
   * The open file and its size, reopened when the path no longer names it (rotated or moved by
   * someone else): two stat calls per line, a few microseconds, for lines written at the pace
   * of requests to the service.
   */
  #current(): { fd: number; size: number } {
    if (this.#fd !== undefined) {
      const size = this.#sizeIfPathStillNamesFd(this.#fd);
      if (size !== undefined) return { fd: this.#fd, size };
      this.#closeFd();
    }
    const fd = this.#openFile();
    this.#fd = fd;
    return { fd, size: fstatSync(fd).size };
  }

  #sizeIfPathStillNamesFd(fd: number): number | undefined {
    try {
      const open = fstatSync(fd, { bigint: true });
      const named = lstatSync(this.path, { bigint: true });
      return open.ino === named.ino && open.dev === named.dev ? Number(open.size) : undefined;
    } catch {
      return undefined;
    }
  }

  /** FILE.keep-1 → FILE.keep, …, FILE.1 → FILE.2, FILE → FILE.1 (the oldest is overwritten), then a new FILE. */
  #rotate(): void {
    this.#closeFd();
    try {
      for (let i = this.#keep - 1; i >= 1; i -= 1) renameIfPresent(`${this.path}.${i}`, `${this.path}.${i + 1}`);
      renameIfPresent(this.path, `${this.path}.1`);
    } catch (error) {
      throw new AuditLogError('audit_rotate_failed', `could not rotate the audit log ${this.path} ${auditPathProblem(error, this.path)}`, { cause: error });
    }
  }

  #openFile(): number {
    try {
      mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    } catch (error) {
      throw new AuditLogError('audit_open_failed', `cannot create the folder of the audit log ${this.path}: ${fsReason(error)}`, { cause: error });
    }
    let fd: number;
    try {
      fd = openSync(this.path, appendFlags, 0o600);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      const notRegular = code === 'ELOOP' || code === 'EISDIR' || code === 'ENXIO';
      throw new AuditLogError(notRegular ? 'audit_not_regular_file' : 'audit_open_failed', `cannot open the audit log ${this.path}: ${fsReason(error)}${notRegular ? '; it must be a regular file' : ''}`, { cause: error });
    }
    try {
      this.#prepare(fd);
      return fd;
    } catch (error) {
      closeSync(fd);
      throw error;
    }
  }

  #prepare(fd: number): void {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new AuditLogError('audit_not_regular_file', `cannot append to the audit log ${this.path}: it is not a regular file`);
    if ((stat.mode & 0o077) !== 0) {
      try {
        fchmodSync(fd, 0o600);
      } catch (error) {
        throw new AuditLogError('audit_open_failed', `the audit log ${this.path} is readable by others (mode ${(stat.mode & 0o777).toString(8)}) and could not be made 0600: ${fsReason(error)}`, { cause: error });
      }
      this.#notices.push({ code: 'mode_tightened', path: this.path, previousMode: stat.mode & 0o777 });
    }
    if (stat.size > 0 && lastByte(this.path, stat.size) !== 0x0a) {
      try {
        writeSync(fd, '\n');
      } catch (error) {
        throw new AuditLogError('audit_write_failed', `could not append to the audit log ${this.path} ${auditPathProblem(error, this.path)}`, { cause: error });
      }
      this.#notices.push({ code: 'partial_line_closed', path: this.path });
    }
  }

  #closeFd(): void {
    if (this.#fd === undefined) return;
    try {
      closeSync(this.#fd);
    } catch {
      // Closing a descriptor we hold fails only when it is already gone.
    }
    this.#fd = undefined;
  }
}

/** pid, host name and user name of this process, from node:os. */
export function processIdentity(): AuditProcess {
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    // A container's uid without a passwd entry.
    user = typeof process.getuid === 'function' ? String(process.getuid()) : 'unknown';
  }
  return { pid: process.pid, host: hostname(), user };
}

function invalid(message: string): AuditLogError {
  return new AuditLogError('audit_entry_invalid', `invalid audit entry: ${message}`);
}

function lastByte(path: string, size: number): number | undefined {
  const fd = openSync(path, readFlags);
  try {
    const byte = Buffer.alloc(1);
    return readSync(fd, byte, 0, 1, size - 1) === 1 ? byte[0] : undefined;
  } finally {
    closeSync(fd);
  }
}

function renameIfPresent(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ENOENT') throw error;
  }
}

/** An error code stays; anything else (a message, which may quote a server) becomes `other`. */
function errorCode(error: string | null | undefined): string | null {
  if (error === undefined || error === null) return null;
  return /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/.test(error) ? error : 'other';
}

/** Fields whose values are never written, whatever a caller passes. */
const secretField = /password|token|secret/i;

function isScalar(value: unknown): value is string | number | boolean | null {
  return value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
}

/** Only plain values of fields that are not secrets: a Secret, an object or a password field never reach a line. */
function safeValues(values: Readonly<Record<string, unknown>> | undefined): Record<string, AuditValue> {
  const out: Record<string, AuditValue> = {};
  if (values === undefined) return out;
  for (const [name, value] of Object.entries(values)) {
    if (secretField.test(name) || isSecret(value)) continue;
    if (isScalar(value)) out[name] = value;
    else if (Array.isArray(value) && value.every((v) => isScalar(v) && !isSecret(v))) out[name] = [...(value as (string | number | boolean | null)[])];
  }
  return out;
}
