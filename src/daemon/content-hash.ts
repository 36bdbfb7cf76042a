import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';

/**
 * A fingerprint of what reading `path` gives now: `sha256:<hex>` of its bytes (following
 * symlinks, as the loader does), or `missing`, `not-a-file`, `error:<CODE>`. Comparing these,
 * not watcher event types, is what makes editors' rename-over saves and Kubernetes' `..data`
 * symlink swaps look like what they are: the content changed, or it did not. A file that
 * becomes readable (a fixed permission) changes its fingerprint too.
 *
 * A folder (one given to -f) is `dir:<hex>` of its listing (names not starting with `.`, each
 * with whether it is a folder): a desired file added to it or removed from it changes that;
 * the files themselves are watched one by one.
 */
export async function contentHash(path: string): Promise<string> {
  try {
    // stat first: a FIFO or device in place of the file must not block the read.
    const info = await stat(path);
    if (info.isDirectory()) return await listingHash(path);
    if (!info.isFile()) return 'not-a-file';
    const hash = createHash('sha256');
    for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
    return `sha256:${hash.digest('hex')}`;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return 'missing';
    return `error:${code ?? 'unknown'}`;
  }
}

async function listingHash(dir: string): Promise<string> {
  const entries = (await readdir(dir, { withFileTypes: true }))
    .filter((e) => !e.name.startsWith('.'))
    .map((e) => `${e.name}${e.isDirectory() ? '/' : ''}`)
    .sort();
  return `dir:${createHash('sha256').update(entries.join('\n')).digest('hex')}`;
}
