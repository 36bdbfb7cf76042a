import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Writes a file so that a reader never sees half of it and a crash never leaves a truncated
 * one: a temporary file in the same folder (same file system, so rename is atomic), created
 * with the final mode (0600 for secrets: never world-readable, not even for a moment),
 * flushed to disk, then renamed over the target. `data` may come as chunks (a large export).
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array | Iterable<string>, mode = 0o600): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = join(dir, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
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
