import { readFile, stat } from 'node:fs/promises';
import { normaliseApproval } from '../policy/index.js';
import { readYaml } from '../yaml/index.js';

/** An approvals file lists hashes, not documents: a larger one is a mistake (or an attack on memory). */
export const maxApprovalsFileBytes = 1024 * 1024;

/** What reading the approvals file gave: the hashes, or why none are taken from it. */
export type ApprovalsRead = { readonly ok: true; readonly hashes: ReadonlySet<string>; readonly missing?: boolean } | { readonly ok: false; readonly error: string };

/**
 * The daemon's approvals file (`daemon.approvalsFile`, a ConfigMap the pipeline writes): a YAML
 * or JSON list of approval hashes, or a mapping whose `approvals` key holds one. Comments and
 * case do not matter. A file that does not exist approves nothing (it has not been written yet);
 * a file that cannot be read, is not such a list, or holds an entry that is not a hash approves
 * nothing either (an error to log): a half-understood approval list must not let anything
 * through. Never throws.
 */
export async function readApprovalsFile(path: string): Promise<ApprovalsRead> {
  let text: string;
  try {
    const info = await stat(path);
    if (!info.isFile()) return { ok: false, error: `${path} is not a regular file` };
    if (info.size > maxApprovalsFileBytes) return { ok: false, error: `${path} is larger than ${maxApprovalsFileBytes / 1024} KB` };
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { ok: true, hashes: new Set(), missing: true };
    return { ok: false, error: `cannot read ${path}: ${code ?? String(error)}` };
  }
  return parseApprovals(text, path);
}

/** The text of an approvals file -> its hashes. Pure. */
export function parseApprovals(text: string, path: string): ApprovalsRead {
  const read = readYaml(text, path, maxApprovalsFileBytes);
  if (!read.source || read.errors.length > 0) {
    const first = read.errors[0];
    return { ok: false, error: `${path} is not YAML or JSON${first ? `: ${first.message} (line ${first.position?.line ?? '?'})` : ''}` };
  }
  let value = read.source.value;
  if (value === null) return { ok: true, hashes: new Set() };
  if (typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 1 && 'approvals' in value) value = (value as { approvals: unknown }).approvals;
  if (value === null) return { ok: true, hashes: new Set() };
  if (!Array.isArray(value)) return { ok: false, error: `${path} must be a list of approval hashes (or a mapping with an approvals: list)` };
  const hashes = new Set<string>();
  for (const [i, entry] of value.entries()) {
    const hash = typeof entry === 'string' ? normaliseApproval(entry) : undefined;
    if (hash === undefined) return { ok: false, error: `${path}: entry ${i + 1} is not an approval hash (16 hex digits, as the plan prints it)` };
    hashes.add(hash);
  }
  return { ok: true, hashes };
}
