import { readdir, realpath, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { InvalidInputError } from '../errors.js';
import { diagnosticCodes, type Diagnostic } from '../model/index.js';
import { compareStrings } from '../text/index.js';

/** Where a desired state is read from: `-f` as given (files or folders), in order. */
export interface DesiredSource {
  readonly paths: readonly string[];
  /** Folders' subfolders too (`--recursive`). @default false */
  readonly recursive?: boolean;
  /** Neither -f nor AMSYNC_FILE named it: ./access.yaml by default (a missing one then says how to name one). */
  readonly defaulted?: boolean;
}

/** More files than a team layout has; a bound on what a wrong `-f /` can make amsync read. */
export const maxDesiredFiles = 10_000;
/** Deepest folder read with --recursive. */
const maxDepth = 32;

const yamlName = /\.ya?ml$/i;

/**
 * The files of a desired state, as they will be named in positions: each `-f` that is a file
 * (or does not exist: reading it says so), and for a folder every `*.yaml` and `*.yml` in it,
 * sorted by name, joined to the folder as given (`teams/ops.yaml`). Subfolders only with
 * `recursive`, in the same order. Names starting with `.` are skipped: hidden files, editors'
 * swap files, and the `..data` and `..<timestamp>` folders of a Kubernetes ConfigMap volume,
 * which hold the same files again. A file given twice (by two paths to it) is read once.
 * Throws InvalidInputError (exit 65) for a folder that holds none, or more than the bound.
 */
export async function desiredFilesOf(source: DesiredSource): Promise<string[]> {
  const out: string[] = [];
  const seen = new Set<string>();
  const add = async (file: string) => {
    const real = await realpath(file).catch(() => resolve(file));
    if (seen.has(real)) return;
    seen.add(real);
    if (out.length >= maxDesiredFiles) throw refused(`more than ${maxDesiredFiles} desired-state files; is -f the right folder?`);
    out.push(file);
  };
  for (const path of source.paths) {
    const info = await stat(path).catch(() => undefined);
    if (!info?.isDirectory()) {
      await add(path);
      continue;
    }
    const found: string[] = [];
    await walk(path, source.recursive === true, found, new Set(), 0);
    if (found.length === 0) {
      throw refused(`${path} holds no *.yaml or *.yml file${source.recursive ? ' (nor do its subfolders)' : ' (its subfolders are read with --recursive)'}`);
    }
    for (const file of found) await add(file);
  }
  return out;
}

async function walk(dir: string, recursive: boolean, out: string[], visited: Set<string>, depth: number): Promise<void> {
  // A folder reached twice through links is read once (and a link to a parent ends there).
  const real = await realpath(dir).catch(() => resolve(dir));
  if (visited.has(real) || depth > maxDepth) return;
  visited.add(real);
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => !n.startsWith('.')).sort(compareStrings);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw refused(`cannot read the folder ${dir}: ${code === 'EACCES' ? 'permission denied' : String(code ?? error)}`);
  }
  for (const name of names) {
    const path = join(dir, name);
    // Links are followed, as for a file given by name: a ConfigMap's entries are links.
    const info = await stat(path).catch(() => undefined);
    if (info?.isFile() && yamlName.test(name)) out.push(path);
    else if (info?.isDirectory() && recursive) await walk(path, recursive, out, visited, depth + 1);
    if (out.length > maxDesiredFiles) return;
  }
}

function refused(message: string): InvalidInputError {
  const d: Diagnostic = { severity: 'error', code: diagnosticCodes.noDesiredFiles, path: '', message };
  return new InvalidInputError(message, [d], 'desired_unreadable');
}

/** The folders a desired state's files were found in (the daemon watches them for added files). */
export async function desiredFoldersOf(source: DesiredSource): Promise<string[]> {
  const out: string[] = [];
  const visit = async (dir: string, depth: number): Promise<void> => {
    out.push(dir);
    if (!source.recursive || depth >= maxDepth) return;
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names.filter((n) => !n.startsWith('.')).sort(compareStrings)) {
      const path = join(dir, name);
      if ((await stat(path).catch(() => undefined))?.isDirectory()) await visit(path, depth + 1);
    }
  };
  for (const path of source.paths) if ((await stat(path).catch(() => undefined))?.isDirectory()) await visit(path, 0);
  return out;
}
