import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { InvalidInputError } from '../errors.js';
import type { DesiredState } from '../model/desired-state.js';
import type { Diagnostic } from '../model/source-position.js';
import { decodeText, tooLarge } from './decode.js';
import { diagnosticCodes } from './diagnostic-codes.js';
import { limits } from './limits.js';
import { parseDesired } from './parse-desired.js';

export interface LoadedDesired {
  readonly value: DesiredState;
  readonly warnings: readonly Diagnostic[];
  /** sha256 (hex) of the file's bytes: what a saved plan or the daemon compares. */
  readonly fileHash: string;
}

/**
 * Reads and parses a desired-state file; the only part of src/spec/ that touches the file
 * system. Throws InvalidInputError (exit 65) carrying every error and warning.
 */
export async function loadDesired(
  path: string,
  env: Readonly<Record<string, string | undefined>>,
  options: { readonly secrets?: 'require' | 'warn' } = {},
): Promise<LoadedDesired> {
  const bytes = await readBounded(path);
  const fileHash = createHash('sha256').update(bytes).digest('hex');
  const decoded = decodeText(bytes, path);
  if (decoded.error) throw invalid(path, [decoded.error]);
  const result = parseDesired(decoded.text, { file: path, env, readSecretFile, baseDir: dirname(resolve(path)), ...options });
  if (!result.value || result.errors.length > 0) throw invalid(path, [...result.errors, ...result.warnings]);
  return { value: result.value, warnings: result.warnings, fileHash };
}

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

function invalid(path: string, diagnostics: readonly Diagnostic[]): InvalidInputError {
  const errors = diagnostics.filter((d) => d.severity === 'error').length;
  return new InvalidInputError(`${path} is not a valid desired-state file (${errors} error${errors === 1 ? '' : 's'}); nothing was sent`, diagnostics, 'desired_invalid');
}

/**
 * Reads a secret file for a `{file: PATH}` reference. Returns an Error instead of throwing;
 * its message never holds the file's content. Refuses devices and FIFOs (a reference to
 * /dev/zero must not hang) and files larger than a password could be.
 */
export function readSecretFile(absPath: string): string | Error {
  try {
    const info = statSync(absPath);
    if (!info.isFile()) return new Error(info.isDirectory() ? 'it is a directory' : 'it is not a regular file');
    if (info.size > limits.maxSecretFileBytes) return new Error(`it is larger than ${limits.maxSecretFileBytes / 1024} KB`);
    return new TextDecoder('utf-8', { fatal: true }).decode(readFileSync(absPath));
  } catch (error) {
    if (error instanceof TypeError) return new Error('it is not UTF-8 text');
    return error instanceof Error ? error : new Error(String(error));
  }
}
