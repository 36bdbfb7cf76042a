import { closeSync, constants, openSync, readSync, type Stats } from 'node:fs';
import { open } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { AmsyncError } from '../errors.js';
import type { SecretValue } from '../model/index.js';
import { writeFileAtomic } from './atomic-write.js';

/**
 * What sits at `tokensDir/<name>` is not a regular file amsync may compare and replace (a
 * FIFO, a symbolic link, a device, a folder), or it cannot be opened. The token of that key is
 * not written; the other keys' are.
 */
export class TokenFileError extends AmsyncError {
  readonly path: string;

  constructor(path: string, problem: string, options?: { cause?: unknown }) {
    super('token_file', `the token file ${path} ${problem}; its token was not written (amsync writes token files only over regular files)`, options);
    this.name = 'TokenFileError';
    this.path = path;
  }
}

// Never follow a symbolic link (it may point anywhere), never wait: opening a FIFO for reading
// blocks until a writer comes, which stalled every sync before. O_NOFOLLOW is 0 where the
// platform has none (Windows), where links are not an issue in the same way.
const safeReadFlags = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
/** A token is a line; a larger file is not one of ours and is simply replaced. */
const maxTokenFileBytes = 64 * 1024;

/** One key's token file to keep current (keepCurrent). */
export interface TokenFile {
  readonly name: string;
  readonly token: SecretValue;
}

/** What keepCurrent did: files written, and the keys whose file could not be (TokenFileError). */
export interface KeptCurrent {
  readonly written: number;
  readonly errors: readonly { readonly name: string; readonly error: TokenFileError }[];
}

/**
 * Where server-generated apikey tokens go: `tokensDir/<name>`, 0600, written atomically, and
 * only when the content differs (a sidecar syncing every few minutes does not churn the
 * files). Tokens are never printed; this is the only place that reveals them.
 */
export class TokenSink {
  constructor(private readonly dir: string) {}

  /** The file a key's token is written to; names are made safe as file names. */
  pathFor(name: string): string {
    return join(this.dir, safeFileName(name));
  }

  /**
   * Every key's file current, as `write` keeps one, for many keys at once (every sync with
   * tokensDir checks every declared key). Each file is read synchronously, without the file
   * system's thread pool (open, read, close: at 100k keys ~0.7 s of CPU against ~6 s through
   * fs.promises), a few hundred between turns of the event loop, and compared as bytes. Only
   * a file that is missing, differs or is not a regular file (a link cannot be opened, a FIFO
   * or a folder cannot be read) goes through `write`, which checks it on its open handle and
   * replaces it, or says what is wrong.
   */
  async keepCurrent(files: Iterable<TokenFile>): Promise<KeptCurrent> {
    const stale: TokenFile[] = [];
    const buffers = { read: Buffer.allocUnsafe(maxTokenFileBytes + 1), token: Buffer.allocUnsafe(maxTokenFileBytes + 1) };
    let since = 0;
    for (const file of files) {
      if (!holds(`${this.dir}${sep}${safeFileName(file.name)}`, file.token.reveal(), buffers)) stale.push(file);
      since += 1;
      if (since === filesPerTurn) {
        since = 0;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    let written = 0;
    const errors: { name: string; error: TokenFileError }[] = [];
    await forEachBounded(stale, writeConcurrency, async (file) => {
      try {
        if (await this.write(file.name, file.token)) written += 1;
      } catch (error) {
        // One key's unusable file must not cost the others theirs.
        if (!(error instanceof TokenFileError)) throw error;
        errors.push({ name: file.name, error });
      }
    });
    return { written, errors };
  }

  /** Returns true when the file was written (new or changed). Throws TokenFileError. */
  async write(name: string, token: SecretValue): Promise<boolean> {
    const path = this.pathFor(name);
    const value = token.reveal();
    if ((await readExisting(path)) === value) return false;
    await writeFileAtomic(path, value, 0o600);
    return true;
  }
}

/**
 * The current content of a token file: undefined when there is none. Opened without following
 * a link and without blocking, then checked to be a regular file on the open handle (no race
 * between a check and the open).
 */
async function readExisting(path: string): Promise<string | undefined> {
  let handle;
  try {
    handle = await open(path, safeReadFlags);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw new TokenFileError(path, 'is a symbolic link', { cause: error });
    throw new TokenFileError(path, `cannot be opened (${code ?? 'error'})`, { cause: error });
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new TokenFileError(path, `is ${describeType(stats)}, not a regular file`);
    if (stats.size > maxTokenFileBytes) return undefined;
    const buffer = Buffer.alloc(stats.size);
    const { bytesRead } = await handle.read(buffer, 0, stats.size, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** Files read synchronously before the event loop gets a turn (~3 ms). */
const filesPerTurn = 512;
/** Files checked and written at once on the slow path: the file system's threads kept busy. */
const writeConcurrency = 16;

/**
 * Whether the file at `path` holds exactly `token`, read without following a link and without
 * blocking, and compared as bytes (no string per file). false for anything else (an error, a
 * file past the size of a token): the caller then takes the slow path, which says what is wrong.
 */
function holds(path: string, token: string, buffers: { readonly read: Buffer; readonly token: Buffer }): boolean {
  const length = Buffer.byteLength(token);
  if (length > maxTokenFileBytes) return false;
  let fd: number;
  try {
    fd = openSync(path, safeReadFlags);
  } catch {
    return false;
  }
  let bytes: number;
  try {
    bytes = readSync(fd, buffers.read, 0, buffers.read.length, 0);
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
  if (bytes !== length) return false;
  buffers.token.write(token, 0, 'utf8');
  return buffers.read.compare(buffers.token, 0, length, 0, length) === 0;
}

/** Runs `run` on each item, at most `limit` at once; stops taking new items after a failure, which it rethrows. */
async function forEachBounded<T>(items: readonly T[], limit: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (next < items.length && !failed) {
      const item = items[next] as T;
      next += 1;
      try {
        await run(item);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

function describeType(stats: Stats): string {
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isDirectory()) return 'a folder';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  return 'a special file';
}

const safeName = /^[A-Za-z0-9._-]+$/;

/**
 * Keeps letters, digits, dot, dash and underscore; every other byte becomes `%XX`, so two
 * names never share a file (a lossy mapping would let one key's token overwrite another's)
 * and no name can leave the folder. `.` and `..` are encoded too.
 */
export function safeFileName(name: string): string {
  if (name === '' || name === '.' || name === '..') return [...name].map(() => '%2E').join('') || '%00';
  if (safeName.test(name)) return name;
  let out = '';
  for (const byte of Buffer.from(name, 'utf8')) {
    const ch = String.fromCharCode(byte);
    out += /[A-Za-z0-9._-]/.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
