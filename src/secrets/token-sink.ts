import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SecretValue } from '../model/index.js';
import { writeFileAtomic } from './atomic-write.js';

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

  /** Returns true when the file was written (new or changed). */
  async write(name: string, token: SecretValue): Promise<boolean> {
    const path = this.pathFor(name);
    const value = token.reveal();
    try {
      if ((await readFile(path, 'utf8')) === value) return false;
    } catch {
      // absent or unreadable: write it
    }
    await writeFileAtomic(path, value, 0o600);
    return true;
  }
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
