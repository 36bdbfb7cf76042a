import { createHash } from 'node:crypto';
import { accessSync, constants, statSync } from 'node:fs';
import { caFileProblem } from '../api/index.js';
import { dirname, resolve } from 'node:path';
import { InvalidInputError } from '../errors.js';
import type { Diagnostic } from '../model/index.js';
import { decodeText, readBounded } from '../yaml/index.js';
import { parseTargets } from './parse-targets.js';
import type { TargetsFile } from './target.js';

export interface LoadTargetsOptions {
  /** `warn` for validate (see ParseTargetsContext.secrets). @default 'require' */
  readonly secrets?: 'require' | 'warn';
  /** `validate --targets`: check each target's caFile now (readable, PEM certificates that parse). */
  readonly checkCaFiles?: boolean;
}

export interface LoadedTargets extends TargetsFile {
  readonly warnings: readonly Diagnostic[];
}

/**
 * Reads and parses a targets file; the only part of src/fleet/ that reads it. Throws
 * InvalidInputError (exit 65, nothing sent) carrying every error and warning, positioned.
 */
export async function loadTargets(path: string, env: Readonly<Record<string, string | undefined>>, options: LoadTargetsOptions = {}): Promise<LoadedTargets> {
  const bytes = await readBounded(path, 'targets_unreadable');
  const fileHash = createHash('sha256').update(bytes).digest('hex');
  const decoded = decodeText(bytes, path);
  if (decoded.error) throw invalidTargets(path, [decoded.error]);
  const { checkCaFiles, ...rest } = options;
  const result = parseTargets(decoded.text, { file: path, env, baseDir: dirname(resolve(path)), checkFile: regularFile, ...rest, ...(checkCaFiles === true ? { checkCaFile: usableCaFile } : {}) });
  if (!result.value || result.errors.length > 0) throw invalidTargets(path, [...result.errors, ...result.warnings]);
  return { file: path, targets: result.value, fileHash, warnings: result.warnings };
}

export function invalidTargets(path: string, diagnostics: readonly Diagnostic[]): InvalidInputError {
  const errors = diagnostics.filter((d) => d.severity === 'error').length;
  return new InvalidInputError(`${path} is not a valid targets file (${errors} error${errors === 1 ? '' : 's'}); nothing was sent`, diagnostics, 'targets_invalid');
}

function usableCaFile(absPath: string): true | Error {
  const problem = caFileProblem(absPath);
  return problem === undefined ? true : new Error(problem);
}

/** A credential file must be a regular file: a FIFO or a device must not hang a later read. */
function regularFile(absPath: string): true | Error {
  try {
    const info = statSync(absPath);
    if (!info.isFile()) return new Error(info.isDirectory() ? 'it is a directory' : 'it is not a regular file');
    // Readable by this process (a file of another user's, mode 0600, is not).
    accessSync(absPath, constants.R_OK);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return new Error(code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : String(code ?? 'error'));
  }
}
