import { readFile, stat } from 'node:fs/promises';
import { InvalidInputError } from '../errors.js';
import { diagnosticCodes, type Diagnostic } from '../model/index.js';
import { tooLarge } from './decode.js';
import { limits } from './limits.js';

/**
 * The file's bytes, refusing before reading what is not a regular file or too large.
 * Throws InvalidInputError with `errorCode` (exit 65: nothing was sent).
 */
export async function readBounded(path: string, errorCode = 'desired_unreadable'): Promise<Uint8Array> {
  const unreadable = (why: string, cause?: unknown): InvalidInputError => {
    const d: Diagnostic = { severity: 'error', code: diagnosticCodes.fileUnreadable, path: '', message: `cannot read ${path}: ${why}` };
    return new InvalidInputError(`cannot read ${path}: ${why}`, [d], errorCode, { cause });
  };
  try {
    const info = await stat(path);
    if (!info.isFile()) throw unreadable(info.isDirectory() ? 'it is a directory' : 'it is not a regular file');
    if (info.size > limits.maxFileBytes) throw new InvalidInputError(`cannot read ${path}: it is too large`, [tooLarge(info.size, path)], errorCode);
    return await readFile(path);
  } catch (error) {
    if (error instanceof InvalidInputError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw unreadable(code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'it is a directory' : String(code ?? error), error);
  }
}

