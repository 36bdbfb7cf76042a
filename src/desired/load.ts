import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { InvalidInputError } from '../errors.js';
import type { DesiredState, Diagnostic } from '../model/index.js';
import { diagnosticCodes } from '../model/index.js';
import { checkSections } from './check-desired.js';
import { checkDesiredPolicy } from '../policy/index.js';
import { decodeText, limits, readBounded, sortDiagnostics } from '../yaml/index.js';
import { desiredFilesOf, type DesiredSource } from './desired-files.js';
import { mergeDesired, type DesiredPart } from './merge-desired.js';
import { parseDesired } from './parse-desired.js';
import type { MissingSecrets } from './resolve-passwords.js';
import type { SelectableTarget } from './target-selector.js';

/** One file a desired state was read from. */
export interface LoadedFile {
  /** As given (a folder's files joined to it). */
  readonly file: string;
  /** sha256 (hex) of its bytes. */
  readonly hash: string;
}

export interface LoadedDesired {
  readonly value: DesiredState;
  readonly warnings: readonly Diagnostic[];
  /**
   * sha256 (hex) of the file's bytes: what a saved plan or the daemon compares. Of several
   * files: sha256 over each file's hash and name, in load order (filesHash).
   */
  readonly fileHash: string;
  /** Every file read, in load order (one, unless several were given or a folder). */
  readonly files: readonly LoadedFile[];
}

type Env = Readonly<Record<string, string | undefined>>;

const crossFileAdvisories: ReadonlySet<string> = new Set([diagnosticCodes.pruneEverything, diagnosticCodes.protectMatchesDeclared]);

/**
 * Reads and parses the desired state: one file, or several (`-f` given more than once, or a
 * folder), each owning the items it declares; then checks the items against the policy. The
 * only part of src/desired/ that touches the file system. Throws InvalidInputError (exit 65)
 * carrying every error and warning of every file.
 */
export async function loadDesired(
  input: string | DesiredSource,
  env: Env,
  options: { readonly secrets?: MissingSecrets; readonly targets?: readonly SelectableTarget[] } = {},
): Promise<LoadedDesired> {
  const source: DesiredSource = typeof input === 'string' ? { paths: [input] } : input;
  const files = await desiredFilesOf(source);
  const parts: DesiredPart[] = [];
  const loaded: LoadedFile[] = [];
  const errors: Diagnostic[] = [];
  const warnings: Diagnostic[] = [];
  for (const file of files) {
    let bytes: Uint8Array;
    try {
      bytes = await readBounded(file);
    } catch (error) {
      if (source.defaulted === true && isMissing(error)) throw noDesiredFile(file);
      if (!(error instanceof InvalidInputError) || files.length === 1) throw error;
      errors.push(...error.diagnostics);
      continue;
    }
    loaded.push({ file, hash: createHash('sha256').update(bytes).digest('hex') });
    const decoded = decodeText(bytes, file);
    if (decoded.error) {
      errors.push(decoded.error);
      continue;
    }
    const result = parseDesired(decoded.text, { file, env, readSecretFile, baseDir: dirname(resolve(file)), ...options });
    errors.push(...result.errors);
    // With several files these look across them, once they are merged (checkSections).
    warnings.push(...(files.length === 1 ? result.warnings : result.warnings.filter((w) => !crossFileAdvisories.has(w.code))));
    if (result.value && result.errors.length === 0) parts.push({ file, value: result.value, sections: result.sections ?? {} });
  }
  // One file is its own state, as before there could be several: no origin to show.
  const merged = files.length === 1 ? (parts[0] ? { value: parts[0].value, errors: [] } : undefined) : mergeDesired(parts);
  if (merged) errors.push(...merged.errors);
  // Only of a whole state: a file left out for its errors would make these wrong.
  if (merged && files.length > 1 && errors.length === 0) warnings.push(...checkSections(merged.value));
  // Checked once the state is whole: the policy may be in another file than the items.
  if (merged && errors.length === 0) errors.push(...checkDesiredPolicy(merged.value));
  if (!merged || errors.length > 0) throw invalid(files.length === 1 ? files[0]! : `${files.length} desired-state files`, [...sortByFile(errors, files), ...sortByFile(warnings, files)], files.length === 1);
  const fileHash = files.length === 1 ? loaded[0]!.hash : filesHash(loaded);
  return { value: merged.value, warnings: sortByFile(warnings, files), fileHash, files: loaded };
}

/**
 * The hash of several files: sha256 over `HASH  NAME` lines (sha256sum's format) in load
 * order. A file edited, added, removed or renamed changes it.
 */
export function filesHash(files: readonly LoadedFile[]): string {
  return createHash('sha256')
    .update(files.map((f) => `${f.hash}  ${f.file}\n`).join(''))
    .digest('hex');
}

/** File by file in load order, each in file order. */
function sortByFile(list: readonly Diagnostic[], files: readonly string[]): Diagnostic[] {
  if (files.length === 1) return [...list];
  const order = new Map(files.map((f, i) => [f, i]));
  const rank = (d: Diagnostic) => order.get(d.position?.file ?? '') ?? -1;
  return sortDiagnostics(list).sort((a, b) => rank(a) - rank(b));
}

function invalid(what: string, diagnostics: readonly Diagnostic[], single: boolean): InvalidInputError {
  const errors = diagnostics.filter((d) => d.severity === 'error').length;
  const subject = single ? `${what} is not a valid desired-state file` : `${what} do not make a valid desired state`;
  return new InvalidInputError(`${subject} (${errors} error${errors === 1 ? '' : 's'}); nothing was sent`, diagnostics, 'desired_invalid');
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

function isMissing(error: unknown): boolean {
  return error instanceof InvalidInputError && (error.cause as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

/** No -f, no AMSYNC_FILE and no ./access.yaml: what to do, not only that the file is missing. */
function noDesiredFile(file: string): InvalidInputError {
  const message =
    `cannot read ${file}: no such file, and neither -f nor AMSYNC_FILE names another desired-state file. ` +
    `Name it with -f FILE (or AMSYNC_FILE=FILE), or start one: \`amsync export -o ${file}\` writes what the service holds now, and examples/access.yaml is a sample to copy`;
  return new InvalidInputError(message, [{ severity: 'error', code: diagnosticCodes.fileUnreadable, path: '', message }], 'desired_unreadable');
}
