import { constants, type Stats } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
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

function describeType(stats: Stats): string {
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isDirectory()) return 'a folder';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  return 'a special file';
}

/**
 * Keeps letters, digits, dot, dash and underscore; every other byte becomes `%XX`, so two
 * names never share a file (a lossy mapping would let one key's token overwrite another's)
 * and no name can leave the folder. `.` and `..` are encoded too.
 */
export function safeFileName(name: string): string {
  if (name === '' || name === '.' || name === '..') return [...name].map(() => '%2E').join('') || '%00';
  let out = '';
  for (const byte of Buffer.from(name, 'utf8')) {
    const ch = String.fromCharCode(byte);
    out += /[A-Za-z0-9._-]/.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
