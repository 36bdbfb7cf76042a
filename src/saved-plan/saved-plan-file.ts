import { readFile, stat } from 'node:fs/promises';
import { InvalidInputError } from '../errors.js';
import { parseSavedPlan } from './saved-plan-schema.js';
import { serialiseSavedPlan, type SavedPlan } from './saved-plan.js';
import { writeFileAtomic, scrub } from '../secrets/index.js';
import { jsonSafe } from '../text/index.js';

/**
 * Largest plan file read. A plan of 100k creates against 100k listed items is about 50 MB;
 * the bound keeps a wrong argument (a disk image, /dev/zero) from exhausting memory.
 */
export const maxPlanFileBytes = 256 * 1024 * 1024;

/**
 * Writes a saved plan: 0600 (it names accounts and secret references, which are not for
 * everyone), atomically (a reader never sees half a plan, and a crash leaves the old one).
 * It is a CI artifact: it passes the one redaction step like any output, so a service that
 * names an item after a secret cannot smuggle the secret into it.
 */
export async function writeSavedPlan(path: string, saved: SavedPlan): Promise<void> {
  await writeFileAtomic(path, jsonSafe(scrub(serialiseSavedPlan(saved))), 0o600);
}

/** Reads and checks a plan file; InvalidInputError (exit 65) for anything but a good plan. */
export async function readSavedPlan(path: string, shownPath: string): Promise<SavedPlan> {
  const unreadable = (why: string, cause?: unknown) => new InvalidInputError(`cannot read the plan file ${shownPath}: ${why}`, [], 'plan_unreadable', { cause });
  let text: string;
  try {
    const info = await stat(path);
    if (!info.isFile()) throw unreadable(info.isDirectory() ? 'it is a directory' : 'it is not a regular file');
    if (info.size > maxPlanFileBytes) throw unreadable(`it is larger than ${maxPlanFileBytes / 1024 / 1024} MB`);
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (error instanceof InvalidInputError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw unreadable(code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : String(code ?? 'read error'), error);
  }
  return parseSavedPlan(text, shownPath);
}
