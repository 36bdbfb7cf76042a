import { lstatSync, statSync, type Stats } from 'node:fs';
import { dirname } from 'node:path';
import { AmsyncError } from '../errors.js';

/**
 * A path on this machine amsync writes (or reads back): the state file, its writer lock and
 * key, tokensDir, the integrator key file, the audit log, a report or plan file.
 */
export interface LocalPath {
  /** In words, with its article: `the state file`, `tokensDir`, `the audit log`. */
  readonly what: string;
  /** As amsync uses it (absolute, or as given). */
  readonly path: string;
  /**
   * How the user sets it, as the rest of amsync's messages say it: `--state-file,
   * AMSYNC_STATE_FILE, stateFile`. A path derived from another says so: `beside the state
   * file: --state-file, AMSYNC_STATE_FILE, stateFile`.
   */
  readonly setting: string;
  /** The flag or variable to name in the fix (`--state-file`). */
  readonly knob: string;
  /** A folder (tokensDir) rather than a file: the fixes speak of it, not of its parent. */
  readonly folder?: boolean;
}

/**
 * A local path amsync cannot write or read: one line naming the path, how it is set, what the
 * file system said (its errno, kept in `errno`), and what to do. Exit 1 (exitCodeFor), never
 * an `unexpected failure` with a stack. `code` is the stable code of the path's kind.
 */
export class LocalPathError extends AmsyncError {
  readonly path: string;
  /** `EROFS`, `ENOSPC`, ...; `ENOTREG` for something that is not a regular file. */
  readonly errno: string | undefined;

  constructor(code: string, message: string, path: string, errno: string | undefined, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'LocalPathError';
    this.path = path;
    this.errno = errno;
  }
}

export interface LocalPathErrorOptions {
  /** The stable code: `state_file_unwritable`, `tokens_dir_unwritable`, ... */
  readonly code: string;
  /** @default 'write' */
  readonly verb?: 'write' | 'read' | 'create';
  /** Found before the first request: the line ends `nothing was sent`. */
  readonly nothingSent?: boolean;
  /** What the failure costs, when something was sent already (`its token was not written`). */
  readonly consequence?: string;
}

/** A Node file-system error's errno (`EACCES`), or undefined for anything else. */
export function errnoOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) ? code : undefined;
}

/** An error a file-system call made (it has an errno), as opposed to a bug or one of amsync's own. */
export function isFsError(error: unknown): boolean {
  return !(error instanceof AmsyncError) && errnoOf(error) !== undefined;
}

/**
 * For a path that is there but is not a regular file, an error shaped as the file system's
 * own: EISDIR for a folder, ENOTREG for a FIFO, a device or a socket. undefined for a regular file.
 */
export function notRegularFile(path: string, info: Stats): NodeJS.ErrnoException | undefined {
  if (info.isFile()) return undefined;
  if (info.isDirectory()) return Object.assign(new Error(`EISDIR: illegal operation on a directory, '${path}'`), { code: 'EISDIR', path });
  const kind = info.isFIFO() ? 'a FIFO (named pipe)' : info.isSocket() ? 'a socket' : info.isCharacterDevice() || info.isBlockDevice() ? 'a device' : 'a special file';
  return Object.assign(new Error(`ENOTREG: ${kind}, not a regular file, '${path}'`), { code: 'ENOTREG', path, kind });
}

/**
 * The one line for a file-system error on a local path. Node's own message (with its absolute
 * path and syscall) and stack stay in `cause`; the line says it in words, with the errno for
 * searching, and the fix.
 */
export function localPathError(error: unknown, target: LocalPath, options: LocalPathErrorOptions): LocalPathError {
  const tail = options.nothingSent ? '; nothing was sent' : options.consequence ? `; ${options.consequence}` : '';
  const message = `cannot ${options.verb ?? 'write'} ${target.what} ${target.path} (${target.setting}): ${whyAndFix(error, target)}${tail}`;
  return new LocalPathError(options.code, message, target.path, errnoOf(error), { cause: error });
}

/** `the file system is read-only (EROFS); point --tokens-dir at a writable file system`: what happened and what to do, for a line of its own. */
export function whyAndFix(error: unknown, target: LocalPath): string {
  const { reason, fix } = fsProblem(error, target);
  return `${reason}; ${fix}`;
}

/** The two halves of whyAndFix, for a line that puts something between them: `the file system is read-only (EROFS)`, `point --state-file at …`. */
export function fsProblem(error: unknown, target: LocalPath): { readonly reason: string; readonly fix: string } {
  const errno = errnoOf(error);
  const { reason, fix } = explain(error, errno, target);
  return { reason: `${reason}${errno ? ` (${errno})` : ''}`, fix };
}

interface Explained {
  readonly reason: string;
  readonly fix: string;
}

function explain(error: unknown, errno: string | undefined, target: LocalPath): Explained {
  // The folder the file system refused (writableProbe says which, when the path's own folder does not exist yet).
  const refused = (error as { folder?: unknown } | null)?.folder;
  const folder = typeof refused === 'string' ? refused : target.folder ? target.path : dirname(target.path);
  const elsewhere = `or point ${target.knob} elsewhere`;
  switch (errno) {
    case 'ENOTDIR':
    case 'EEXIST': {
      // mkdir -p says EEXIST where a regular file sits in the way of a folder; open says ENOTDIR.
      const blocker = fileInTheWay(target.path, target.folder === true);
      if (blocker === undefined) return { reason: 'a part of the path is not a folder', fix: `make every part of the path a folder, ${elsewhere}` };
      return { reason: `${blocker.path} is ${blocker.kind}, not a folder`, fix: `move ${blocker.kind === 'a file' ? 'that file' : 'it'} away, ${elsewhere}` };
    }
    case 'EISDIR':
      return { reason: `${target.path} is a folder`, fix: `move that folder away, or point ${target.knob} at a file` };
    case 'ENOTREG':
      return { reason: `it is ${String((error as { kind?: unknown }).kind ?? 'a special file')}, not a regular file`, fix: `point ${target.knob} at a regular file` };
    case 'EROFS':
      return { reason: 'the file system is read-only', fix: `point ${target.knob} at a writable file system (a writable volume, not a read-only mount)` };
    case 'EACCES':
    case 'EPERM':
      // The file itself refused (a 0444 audit log in a writable folder): its folder is not the fix.
      return { reason: `permission denied${uid()}`, fix: `let this user write to ${refusedFile(error, target) ?? folder}, ${elsewhere}` };
    case 'ENOSPC':
      return { reason: 'no space left on the device', fix: `free space on that disk, or point ${target.knob} at another disk` };
    case 'EDQUOT':
      return { reason: 'the disk quota is exceeded', fix: `free space within the quota, or point ${target.knob} at another disk` };
    case 'ENOENT':
      return { reason: 'a folder of the path disappeared while amsync used it', fix: `run again, ${elsewhere}` };
    case 'ELOOP':
      // O_NOFOLLOW (the audit log) refuses a link at the path itself with ELOOP too: that is no loop.
      if (isLink(target.path)) return { reason: `${target.path} is a symbolic link, which amsync does not follow there`, fix: `point ${target.knob} at a regular file, not a link` };
      return { reason: 'the path has a loop of symbolic links', fix: `fix the links, ${elsewhere}` };
    case 'ENAMETOOLONG':
      return { reason: 'the path is too long', fix: `point ${target.knob} at a shorter path` };
    default:
      return { reason: errno === undefined ? String(error instanceof Error ? error.message : error) : 'the file system refused it', fix: `check ${folder}, ${elsewhere}` };
  }
}

/**
 * The file whose own open was refused: the probe says so (`file`); a real write's open of the
 * path itself (appendFile on the step summary) is the file when one is there. undefined when
 * the refusal was the folder's (creating a file in it).
 */
function refusedFile(error: unknown, target: LocalPath): string | undefined {
  const e = error as { file?: unknown; path?: unknown; syscall?: unknown } | null;
  if (typeof e?.file === 'string') return e.file;
  if (target.folder === true || e?.syscall !== 'open' || e.path !== target.path) return undefined;
  try {
    return statSync(target.path).isFile() ? target.path : undefined;
  } catch {
    return undefined;
  }
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

function uid(): string {
  const id = process.getuid?.();
  return id === undefined ? '' : ` for uid ${id}`;
}

/** The nearest part of `path` (or of its folder) that exists and is not a folder, and what it is (`a file`, `a FIFO (named pipe)`); undefined if none. */
function fileInTheWay(path: string, isFolder: boolean): { readonly path: string; readonly kind: string } | undefined {
  const parts: string[] = [];
  for (let p = isFolder ? path : dirname(path); ; p = dirname(p)) {
    parts.unshift(p);
    if (dirname(p) === p) break;
  }
  for (const part of parts) {
    let info: Stats;
    try {
      info = statSync(part);
    } catch {
      return undefined;
    }
    if (info.isDirectory()) continue;
    const special = notRegularFile(part, info) as { kind?: string } | undefined;
    return { path: part, kind: special?.kind ?? 'a file' };
  }
  return undefined;
}
