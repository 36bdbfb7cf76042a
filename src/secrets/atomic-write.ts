import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { notRegularFile } from './local-path-error.js';

/**
 * Writes a file so that a reader never sees half of it and a crash never leaves a truncated
 * one: a temporary file in the same folder (same file system, so rename is atomic), created
 * with the final mode (0600 for secrets: never world-readable, not even for a moment),
 * flushed to disk, then renamed over the target. `data` may come as chunks (a large export).
 * Only a regular file (or nothing) is replaced: a rename over a device, a FIFO or a socket
 * would put a file where they were (as root, `--report /dev/full` replaced the device), so
 * those are ENOTREG and a folder EISDIR, before anything is written.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array | Iterable<string>, mode = 0o600): Promise<void> {
  await refuseSpecialFile(path);
  const dir = dirname(path);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = tempPathFor(path, randomBytes(6).toString('hex'));
  const handle = await open(tmp, 'wx', mode);
  try {
    try {
      if (typeof data === 'string' || data instanceof Uint8Array) await handle.writeFile(data);
      else for (const chunk of data) await handle.write(chunk);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, path);
  } catch (error) {
    // Never leave a partial temporary file behind: it may hold part of a token.
    await rm(tmp, { force: true });
    throw error;
  }
}

/** The longest file name (bytes) most file systems take (NAME_MAX of ext4, xfs, btrfs, tmpfs): longer is ENAMETOOLONG. */
export const maxFileNameBytes = 255;
/** The longest path (bytes) the kernel takes (PATH_MAX, 4096 with its terminating NUL): longer is ENAMETOOLONG. */
export const maxPathBytes = 4095;

/**
 * The temporary file writeFileAtomic writes `path` through: `.<name>.<nonce>.tmp` beside it,
 * or `.<nonce>.tmp` where that would pass NAME_MAX (a name of 238 to 255 bytes can be written,
 * its temporary name with the name in it could not).
 */
export function tempPathFor(path: string, nonce: string): string {
  const named = `.${basename(path)}.${nonce}.tmp`;
  return join(dirname(path), Buffer.byteLength(named) <= maxFileNameBytes ? named : `.${nonce}.tmp`);
}

/** Throws when `path` (followed through links) is there and is not a regular file. */
async function refuseSpecialFile(path: string): Promise<void> {
  let info;
  try {
    info = await stat(path);
  } catch {
    return; // absent, or a folder in the way: the write itself says so
  }
  const refused = notRegularFile(path, info);
  if (refused) throw refused;
}
