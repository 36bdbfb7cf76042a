import { closeSync, constants, lstatSync, openSync, readSync, type Stats } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { AmsyncError } from '../errors.js';
import type { SecretValue } from '../model/index.js';
import { maxFileNameBytes, maxPathBytes, tempPathFor, writeFileAtomic } from './atomic-write.js';
import { isFsError, whyAndFix } from './local-path-error.js';
import type { KeptCurrent, PasswordSink, SecretSink, TokenFile } from './secret-sink.js';

/**
 * What sits at `tokensDir/<name>` is not a regular file amsync may compare and replace (a
 * FIFO, a symbolic link, a device, a folder), or it cannot be opened. The token of that key is
 * not written; the other keys' are.
 */
export class TokenFileError extends AmsyncError {
  readonly path: string;

  constructor(path: string, problem: string, options?: { cause?: unknown; regularOnly?: boolean }) {
    super('token_file', `the token file ${path} ${problem}; its token was not written${options?.regularOnly === false ? '' : ' (amsync writes token files only over regular files)'}`, options);
    this.name = 'TokenFileError';
    this.path = path;
  }

  /** The file system refused the write (EROFS, ENOSPC, EACCES...): said in words, with the fix. */
  static unwritable(path: string, dir: string, error: unknown): TokenFileError {
    const why = whyAndFix(error, { what: 'tokensDir', path: dir, setting: tokensDirSetting, knob: '--tokens-dir', folder: true });
    return new TokenFileError(path, `cannot be written: ${why}`, { cause: error, regularOnly: false });
  }
}

/** How the user sets tokensDir (src/secrets does not read the settings table). */
const tokensDirSetting = '--tokens-dir, AMSYNC_TOKENS_DIR, tokensDir';

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
export class TokenSink implements SecretSink, PasswordSink {
  constructor(private readonly dir: string) {}

  get describe(): string {
    return `tokensDir ${this.dir}`;
  }

  /** The file a key's token is written to; names are made safe as file names. */
  pathFor(name: string): string {
    return join(this.dir, safeFileName(name));
  }

  /**
   * Why the file of `name` (pathFor) could not be written by its name, or undefined when it
   * can: its file name past NAME_MAX (255 bytes), or its path, or the temporary file's it is
   * written through, past PATH_MAX. Checked before anything is sent (a secret the service
   * returned or took must have a place to go), and by write.
   */
  nameProblem(name: string): string | undefined {
    const fileName = safeFileName(name);
    const bytes = Buffer.byteLength(fileName);
    if (bytes > maxFileNameBytes) {
      return `its file name would be ${bytes} bytes, past the ${maxFileNameBytes} a file name may have (NAME_MAX; each byte of the name other than a letter, a digit, ., - or _ takes three, %XX)`;
    }
    const longest = Math.max(Buffer.byteLength(this.pathFor(name)), Buffer.byteLength(tempPathFor(this.pathFor(name), tempNonce)));
    if (longest > maxPathBytes) return `its path in ${this.dir} would be ${longest} bytes, past the ${maxPathBytes} a path may have (PATH_MAX)`;
    return undefined;
  }

  /**
   * Every key's file current, as `write` keeps one, for many keys at once (every sync with
   * tokensDir checks every declared key).
   *
   * A file is not read again when nothing about it changed since amsync last saw it hold the
   * same token: the sink keeps, in `tokensDir/.amsync~index` (0600; `~` is escaped in every
   * key's file name, so no key's file can have that name), a hash of each file's name, inode,
   * size, change and modification times and token, and compares it with one lstat. Any write to
   * a file changes its change time, which no one but the kernel sets, so an edited, replaced or
   * deleted file is read again and repaired. A file changed in the last 2 s is not remembered
   * (it may change again within the same tick of the clock); one amsync writes itself is, so
   * only a write by someone else within a tick (a few ms) of amsync's own could go unseen
   * until the file changes again. At 100k keys the files' contents are 100k disk blocks
   * besides their inodes: reading them took ~3 s of system time with a cold page cache.
   *
   * Any other file is read synchronously, without the file system's thread pool (open, read,
   * close), a few hundred between turns of the event loop, and compared as bytes. Only a file
   * that is missing, differs or is not a regular file (a link cannot be opened, a FIFO or a
   * folder cannot be read) goes through `write`, which checks it on its open handle and
   * replaces it, or says what is wrong.
   */
  async keepCurrent(files: Iterable<TokenFile>): Promise<KeptCurrent> {
    const indexPath = join(this.dir, indexName);
    const seen = new IndexReader(await readIndex(indexPath));
    // The index to write: a line per file amsync saw hold its token, in the declared order.
    const next: (string | undefined)[] = [];
    let unchanged = true;
    const now = Date.now();
    const stale: { readonly file: TokenFile; readonly at: number }[] = [];
    const buffers = { read: Buffer.allocUnsafe(maxTokenFileBytes + 1), token: Buffer.allocUnsafe(maxTokenFileBytes + 1) };
    let since = 0;
    for (const file of files) {
      const fileName = safeFileName(file.name);
      const path = `${this.dir}${sep}${fileName}`;
      const token = file.token.reveal();
      const signature = signatureOf(path, fileName, token);
      const line = signature?.line;
      if (line !== undefined && seen.has(line)) next.push(line);
      else {
        unchanged = false;
        if (!holds(path, token, buffers)) stale.push({ file, at: next.length });
        // Not remembered while it may still be changing within the same tick of the clock.
        next.push(line !== undefined && now - signature!.changedAt > racyMs ? line : undefined);
      }
      since += 1;
      if (since === filesPerTurn) {
        since = 0;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    let written = 0;
    const errors: { name: string; error: TokenFileError }[] = [];
    await forEachBounded(stale, writeConcurrency, async ({ file, at }) => {
      next[at] = undefined;
      try {
        const wrote = await this.write(file.name, file.token);
        if (wrote) written += 1;
        const fileName = safeFileName(file.name);
        const signature = signatureOf(`${this.dir}${sep}${fileName}`, fileName, file.token.reveal());
        if (signature !== undefined && (wrote || Date.now() - signature.changedAt > racyMs)) next[at] = signature.line;
      } catch (error) {
        // One key's unusable file must not cost the others theirs.
        if (!(error instanceof TokenFileError)) throw error;
        errors.push({ name: file.name, error });
      }
    });
    if (!(unchanged && seen.allSeen)) await writeIndex(indexPath, next);
    return { written, errors };
  }

  /**
   * Where generated SSH passwords go (`password: {generate}`): `passwords~/<username>` in this
   * folder, with the same rules (0600, atomic, regular files only). `~` is escaped in every
   * key's file name, so no apikey's token file can be that folder.
   */
  passwordSink(): TokenSink {
    return new TokenSink(join(this.dir, passwordsFolder));
  }

  /** What the files of `names` hold now; a missing or unusable file (a link, a FIFO) is left out. */
  async readAll(names: readonly string[]): Promise<ReadonlyMap<string, string>> {
    const found = new Map<string, string>();
    for (const name of names) {
      try {
        const content = await this.read(name);
        if (content !== undefined) found.set(name, content);
      } catch (error) {
        if (!(error instanceof TokenFileError)) throw error;
      }
    }
    return found;
  }

  /** What the file of `name` holds now; undefined when there is none. Throws TokenFileError. */
  async read(name: string): Promise<string | undefined> {
    return readExisting(this.pathFor(name));
  }

  /** Returns true when the file was written (new or changed). Throws TokenFileError. */
  async write(name: string, token: SecretValue): Promise<boolean> {
    const path = this.pathFor(name);
    const unwritable = this.nameProblem(name);
    if (unwritable !== undefined) throw new TokenFileError(path, `cannot be written: ${unwritable}`, { regularOnly: false });
    const value = token.reveal();
    if ((await readExisting(path)) === value) return false;
    try {
      await writeFileAtomic(path, value, 0o600);
    } catch (error) {
      // One key's file: the others are still tried (keepCurrent), and the run says which failed.
      if (isFsError(error)) throw TokenFileError.unwritable(path, this.dir, error);
      throw error;
    }
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

/** As long as writeFileAtomic's nonce (the length is what counts). */
const tempNonce = '0'.repeat(12);

/** The folder of generated passwords (TokenSink.passwordSink); `~` never appears in a key's file name. */
export const passwordsFolder = 'passwords~';

/** The sink's memory of the files (see keepCurrent); `~` never appears in a key's file name. */
const indexName = '.amsync~index';
/** A file changed this recently may change again within the same tick of the clock: read it again next time. */
const racyMs = 2_000;

/**
 * What one lstat tells of a regular file, with the file's name and the token it is meant to
 * hold, as one line of the index: 64 bits of two hashes of (name, inode, size, times in
 * microseconds, token), so the index holds nothing to recover a token from and costs ~20 bytes
 * a file. undefined for anything but a regular file.
 */
function signatureOf(path: string, fileName: string, token: string): { readonly line: string; readonly changedAt: number } | undefined {
  let stats: Stats | undefined;
  try {
    stats = lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
  if (stats === undefined || !stats.isFile()) return undefined;
  const hash = new PairHash();
  hash.text(fileName);
  hash.number(stats.ino);
  hash.number(stats.size);
  hash.number(Math.round(stats.mtimeMs * 1000));
  hash.number(Math.round(stats.ctimeMs * 1000));
  hash.text(token);
  return { line: hash.line(), changedAt: stats.ctimeMs };
}

/** Two independent FNV-1a style hashes (64 bits together), fed field by field. */
class PairHash {
  #a = 0x811c9dc5;
  #b = 0x01000193;

  #unit(unit: number): void {
    this.#a = Math.imul(this.#a ^ unit, 0x01000193);
    this.#b = Math.imul((this.#b ^ unit) + 0x9e3779b9, 0x85ebca6b);
  }

  text(value: string): void {
    for (let i = 0; i < value.length; i += 1) this.#unit(value.charCodeAt(i));
    this.#unit(0x10000); // ends the field
  }

  /** A non-negative integer below 2^53, in 16-bit pieces. */
  number(value: number): void {
    for (let rest = value; rest > 0; rest = Math.floor(rest / 0x10000)) this.#unit(rest % 0x10000);
    this.#unit(0x10001);
  }

  line(): string {
    return `${(this.#a >>> 0).toString(36)}.${(this.#b >>> 0).toString(36)}\n`;
  }
}

/** The index's text as last written; empty when there is none, or it is not one of ours. */
async function readIndex(path: string): Promise<string> {
  try {
    const text = await readFile(path, { encoding: 'utf8', flag: safeReadFlags });
    return text.startsWith(indexHeader) ? text.slice(indexHeader.length) : '';
  } catch {
    return '';
  }
}

const indexHeader = 'amsync token files 2\n';

/**
 * The index, read in the order it was written (the declared keys' order, which a run nearly
 * always repeats): each file's line is compared where the last one ended, without splitting
 * the text; only once the order differs are the rest put in a set.
 */
class IndexReader {
  readonly #text: string;
  #at = 0;
  #rest: Set<string> | undefined;

  constructor(text: string) {
    this.#text = text;
  }

  /** Whether the index holds `line` (see signatureOf). */
  has(line: string): boolean {
    if (this.#rest === undefined) {
      if (this.#text.startsWith(line, this.#at)) {
        this.#at += line.length;
        return true;
      }
      this.#rest = new Set(this.#text.slice(this.#at).split('\n').map((l) => `${l}\n`));
    }
    return this.#rest.has(line);
  }

  /** Every line was met in order (no file left out since). */
  get allSeen(): boolean {
    return this.#rest === undefined && this.#at === this.#text.length;
  }
}

/** Written atomically, 0600; a folder where it cannot be written only costs the reads again. */
async function writeIndex(path: string, lines: readonly (string | undefined)[]): Promise<void> {
  const chunks = function* (): Generator<string> {
    let chunk = indexHeader;
    for (const line of lines) {
      if (line === undefined) continue;
      chunk += line;
      if (chunk.length > 1 << 16) {
        yield chunk;
        chunk = '';
      }
    }
    yield chunk;
  };
  try {
    await writeFileAtomic(path, chunks(), 0o600);
  } catch {
    // Only a cost: the next run reads the files again.
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
