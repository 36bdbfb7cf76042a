import { randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { lstat, open, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { notRegularFile } from './local-path-error.js';

/**
 * How amsync writes a path: `replace` (a temporary file beside it, renamed over it: the state
 * file, its key, a report, a plan; a symbolic link there is replaced, not followed, unless it
 * leads to something that is not a regular file), `append` (opened with O_APPEND | O_NOFOLLOW:
 * the audit log, which also rotates beside itself; a symbolic link there is refused),
 * `append-followed` (appendFile, following links, never rotated: GITHUB_STEP_SUMMARY),
 * `folder` (files created inside it, through a link to a folder too: tokensDir), `beside`
 * (only its folder matters: the writer lock, whose own format is the lock's business).
 */
export type WriteMode = 'replace' | 'append' | 'append-followed' | 'folder' | 'beside';

// As the audit log opens itself (src/audit/audit-log.ts): never through a link, never waiting on a FIFO.
const appendNoFollow = constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const appendFollow = constants.O_WRONLY | constants.O_APPEND | constants.O_NONBLOCK;

/**
 * Checks, before the first request, that amsync will be able to write `path` the way it does,
 * by doing what the write does where it can be undone: a folder in the way is found by stat,
 * and the folder that will hold the file (or its nearest part that exists: the rest is made
 * with mkdir -p there) takes a small temporary file, written and removed. So a read-only file
 * system (EROFS), a folder this user may not write (EACCES, EPERM, whoever the user is: root
 * too, where sysfs or a read-only bind refuses), a full disk (ENOSPC, EDQUOT), a file where
 * a folder must be (ENOTDIR) and a symbolic link where amsync refuses one (ELOOP) are found
 * while nothing was sent. Throws the file system's error (with its errno; ENOTREG for a FIFO,
 * device or socket where a file must be; `file` set when the file itself refused, `folder`
 * when its folder did), for localPathError to put in words. Never writes the path itself.
 */
export async function probeWritable(path: string, mode: WriteMode): Promise<void> {
  if (mode === 'folder') {
    const existing = await statOrUndefined(path);
    if (existing !== undefined && !existing.isDirectory()) throw notAFolder(path, existing);
    await probeFolder(path, existing !== undefined);
    return;
  }
  if (mode === 'append') await refuseLink(path);
  const existing = mode === 'beside' ? undefined : await statOrUndefined(path, mode === 'replace');
  if (existing !== undefined) {
    const refused = notRegularFile(path, existing);
    if (refused) throw refused;
    if (mode === 'append' || mode === 'append-followed') await probeAppend(path, mode === 'append' ? appendNoFollow : appendFollow);
    // Appending to a file that is there needs nothing of its folder; the audit log rotates beside itself.
    if (mode === 'append-followed') return;
  }
  await probeFolder(dirname(path), false);
}

/** The audit log opens with O_NOFOLLOW: a link there fails it (ELOOP) after the requests, so it is refused now. */
async function refuseLink(path: string): Promise<void> {
  const info = await lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (info?.isSymbolicLink()) throw Object.assign(new Error(`ELOOP: a symbolic link, not followed, '${path}'`), { code: 'ELOOP', path, kind: 'a symbolic link' });
}

/** Opens the file itself for appending, as the write does, and closes it; its refusal names the file. */
async function probeAppend(path: string, flags: number): Promise<void> {
  try {
    await (await open(path, flags)).close();
  } catch (error) {
    throw Object.assign(error as object, { file: path });
  }
}

/** ENOTDIR for something at a folder's path, saying what it is: `a file`, `a FIFO (named pipe)`, `a device`. */
function notAFolder(path: string, info: Stats): NodeJS.ErrnoException {
  const kind = info.isFile() ? undefined : (notRegularFile(path, info) as { kind?: string } | undefined)?.kind;
  return Object.assign(new Error(`ENOTDIR: not a directory, '${path}'`), { code: 'ENOTDIR', path, ...(kind === undefined ? {} : { kind }) });
}

/** A temporary file in `dir`, or in the nearest part of it that exists (checked to be a folder). */
async function probeFolder(dir: string, known: boolean): Promise<void> {
  let at = dir;
  if (!known) {
    for (;;) {
      const info = await statOrUndefined(at);
      if (info !== undefined) {
        if (!info.isDirectory()) throw notAFolder(at, info);
        break;
      }
      if (dirname(at) === at) return;
      at = dirname(at);
    }
  }
  try {
    await writeAndRemove(join(at, `.amsync-probe-${randomBytes(6).toString('hex')}`));
  } catch (error) {
    // The folder that refused: the path's own may not exist yet.
    throw Object.assign(error as object, { folder: at });
  }
}

/**
 * One block's worth written (a full disk refuses the data, not always the empty file), then
 * removed whatever happened: a close that fails (EDQUOT, ENOSPC, EIO when NFS or a quota
 * flushes) must not leave the file where a token consumer or the next run would find it.
 */
async function writeAndRemove(probe: string): Promise<void> {
  const handle = await open(probe, 'wx', 0o600);
  try {
    try {
      await handle.write(Buffer.alloc(512));
    } finally {
      await handle.close();
    }
  } finally {
    await unlink(probe).catch(() => undefined);
  }
}

/**
 * stat (following links, as the writes do), undefined when nothing is there. `linkReplaced`:
 * a dangling or looping link the write renames over (writeFileAtomic) counts as nothing.
 */
async function statOrUndefined(path: string, linkReplaced = false): Promise<Stats | undefined> {
  try {
    return await stat(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && !linkReplaced) return undefined;
    if ((code === 'ENOENT' || code === 'ELOOP') && linkReplaced && (await isLinkOrAbsent(path))) return undefined;
    throw error;
  }
}

async function isLinkOrAbsent(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isSymbolicLink();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw error;
  }
}
