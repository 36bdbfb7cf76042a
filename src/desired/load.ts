import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { InvalidInputError } from '../errors.js';
import type { DesiredState, Diagnostic } from '../model/index.js';
import { decodeText, limits, readBounded } from '../yaml/index.js';
import { parseDesired } from './parse-desired.js';
import type { SelectableTarget } from './target-selector.js';

export interface LoadedDesired {
  readonly value: DesiredState;
  readonly warnings: readonly Diagnostic[];
  /** sha256 (hex) of the file's bytes: what a saved plan or the daemon compares. */
  readonly fileHash: string;
}

/**
 * Reads and parses a desired-state file; the only part of src/desired/ that touches the file
 * system. Throws InvalidInputError (exit 65) carrying every error and warning.
 */
export async function loadDesired(
  path: string,
  env: Readonly<Record<string, string | undefined>>,
  options: { readonly secrets?: 'require' | 'warn'; readonly targets?: readonly SelectableTarget[] } = {},
): Promise<LoadedDesired> {
  const bytes = await readBounded(path);
  const fileHash = createHash('sha256').update(bytes).digest('hex');
  const decoded = decodeText(bytes, path);
  if (decoded.error) throw invalid(path, [decoded.error]);
  const result = parseDesired(decoded.text, { file: path, env, readSecretFile, baseDir: dirname(resolve(path)), ...options });
  if (!result.value || result.errors.length > 0) throw invalid(path, [...result.errors, ...result.warnings]);
  return { value: result.value, warnings: result.warnings, fileHash };
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
