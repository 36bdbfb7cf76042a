import { randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { open, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { notRegularFile } from './local-path-error.js';

/**
 * How amsync writes a path: `replace` (a temporary file beside it, renamed over it: the state
 * file, its key, a report, a plan), `append` (opened with O_APPEND: the audit log, which also
 * rotates beside itself), `folder` (files created inside it: tokensDir), `beside` (only its
 * folder matters: the writer lock, whose own format is the lock's business).
 */
export type WriteMode = 'replace' | 'append' | 'folder' | 'beside';

/**
 * Checks, before the first request, that amsync will be able to write `path` the way it does,
 * by doing what the write does where it can be undone: a folder in the way is found by stat,
 * and the folder that will hold the file (or its nearest part that exists: the rest is made
 * with mkdir -p there) takes a small temporary file, written and removed. So a read-only file
 * system (EROFS), a folder this user may not write (EACCES, EPERM, whoever the user is: root
 * too, where sysfs or a read-only bind refuses), a full disk (ENOSPC, EDQUOT) and a file where
 * a folder must be (ENOTDIR) are found while nothing was sent. Throws the file system's error
 * (with its errno; ENOTREG for a FIFO, device or socket where a file must be), for
 * localPathError to put in words. Never writes the path itself.
 */
export async function probeWritable(path: string, mode: WriteMode): Promise<void> {
  const existing = await statOrUndefined(path);
  if (mode === 'folder') {
    if (existing !== undefined && !existing.isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, '${path}'`), { code: 'ENOTDIR', path });
    await probeFolder(path, existing !== undefined);
    return;
  }
  if (existing !== undefined && mode !== 'beside') {
    const refused = notRegularFile(path, existing);
    if (refused) throw refused;
    if (mode === 'append') await (await open(path, constants.O_WRONLY | constants.O_APPEND)).close();
  }
  await probeFolder(dirname(path), false);
}

/** A temporary file in `dir`, or in the nearest part of it that exists (checked to be a folder). */
async function probeFolder(dir: string, known: boolean): Promise<void> {
  let at = dir;
  if (!known) {
    for (;;) {
      const info = await statOrUndefined(at);
      if (info !== undefined) {
        if (!info.isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, '${at}'`), { code: 'ENOTDIR', path: at });
        break;
      }
      if (dirname(at) === at) return;
      at = dirname(at);
    }
  }
  const probe = join(at, `.amsync-probe-${randomBytes(6).toString('hex')}`);
  try {
    const handle = await open(probe, 'wx', 0o600);
    try {
      // One block's worth: a full disk refuses the data, not always the empty file.
      await handle.write(Buffer.alloc(512));
    } finally {
      await handle.close();
      await unlink(probe).catch(() => undefined);
    }
  } catch (error) {
    // The folder that refused: the path's own may not exist yet.
    throw Object.assign(error as object, { folder: at });
  }
}

async function statOrUndefined(path: string): Promise<Stats | undefined> {
  try {
    return await stat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
