import { createHash } from 'node:crypto';
import { closeSync, fstatSync, linkSync, openSync, readFileSync, renameSync, rmdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { ownerName, ownerState, parseOwner, type LockOwner } from './lock-owner.js';

/**
 * The lock file's primitives, all synchronous (a check runs right before a write is sent) and
 * each atomic on a local file system and on NFS: a record is written whole to a file of its
 * own, then hard-linked to its name (link fails if the name exists), or renamed over it.
 */

/** What is at a lock's path. */
export type Found =
  | { readonly kind: 'none' }
  /** `owner` undefined: a file amsync did not write (empty, garbage). */
  | { readonly kind: 'file'; readonly text: string; readonly owner: LockOwner | undefined; readonly ageMs: number }
  /** The lock folder of an amsync before issue 27 (proper-lockfile's mkdir lock). */
  | { readonly kind: 'folder'; readonly ageMs: number };

/** Free to take (its holder died, or stopped refreshing it elsewhere), or held, and why, in words. */
export type Verdict = { readonly free: boolean; readonly why: string };

/** Reads `path` through one descriptor, so its content and its age are of the same file. */
export function readFound(path: string): Found {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'none' };
    throw error;
  }
  try {
    const stat = fstatSync(fd);
    const ageMs = Math.max(0, Date.now() - stat.mtimeMs);
    if (stat.isDirectory()) return { kind: 'folder', ageMs };
    const text = readFileSync(fd, 'utf8');
    return { kind: 'file', text, owner: parseOwner(text), ageMs };
  } finally {
    closeSync(fd);
  }
}

/** The content at `path`, or undefined when there is none. */
export function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR') return undefined;
    throw error;
  }
}

/**
 * Whether the lock at `path` may be taken. On this host the holder's process decides, not the
 * file's age: a running or stopped (paused) holder keeps it however old its file looks, a dead
 * one gives it up at once. A holder on another host, or in another pid namespace, cannot be
 * seen from here: it keeps the lock while it refreshes it, and fencing covers a pause.
 */
export function judge(found: Exclude<Found, { kind: 'none' }>, staleMs: number): Verdict {
  const age = `${Math.round(found.ageMs / 1000)} s`;
  const stale = found.ageMs >= staleMs;
  if (found.kind === 'folder') {
    return { free: stale, why: stale ? `the lock folder of an older amsync was not refreshed for ${age}` : `held by an older amsync version (a lock folder refreshed ${age} ago)` };
  }
  const owner = found.owner;
  if (owner === undefined) return { free: stale, why: stale ? `it held no owner amsync can read and was not refreshed for ${age}` : `held (it names no owner amsync can read; refreshed ${age} ago)` };
  const name = ownerName(owner);
  switch (ownerState(owner)) {
    case 'running':
      return { free: false, why: `held by ${name} (since ${owner.acquiredAt})` };
    case 'stopped':
      return { free: false, why: `held by ${name} (since ${owner.acquiredAt}), which is stopped (paused: SIGSTOP, a debugger, a suspended job): it still holds the lock and writes again when it resumes` };
    case 'dead':
      return { free: true, why: `its holder, ${name}, is no longer running (it ended without releasing the lock: killed, out of memory, or a crash)` };
    case 'unknown':
      return stale
        ? { free: true, why: `its holder, ${name}, did not refresh it for ${age}` }
        : { free: false, why: `held by ${name} (another host or pid namespace: refreshed ${age} ago, and taken over once not refreshed for ${Math.round(staleMs / 1000)} s)` };
    case 'unseen':
      return stale
        ? { free: true, why: `its holder, ${name}, cannot be inspected from here (its pid is a process this user may not look at: another user's, /proc mounted hidepid) and did not refresh it for ${age}` }
        : { free: false, why: `held by ${name}, whose process cannot be inspected from here (another user's, /proc mounted hidepid): refreshed ${age} ago, and taken over once not refreshed for ${Math.round(staleMs / 1000)} s` };
  }
}

/** Hard-links `from` to `to`; false when `to` exists. */
export function linkNew(from: string, to: string): boolean {
  try {
    linkSync(from, to);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

export function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Gone already, or another's to remove.
  }
}

/** Removes an older amsync's empty lock folder (rmdir never removes a lock file put there meanwhile). */
export function removeFolder(path: string): void {
  try {
    rmdirSync(path);
  } catch {
    // Removed by another taker, or replaced: look again.
  }
}

/** Where the taker of the lock record `text` claims it: one claim per record, made by link. */
export function claimPath(path: string, text: string): string {
  return `${path}.takeover-${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;
}

/** How many abandoned takeovers (a taker that died mid-takeover) are stepped over at most. */
const maxClaims = 8;

/**
 * Replaces the record `root` at `path` by ours (`record`, a file of our own) — unless another
 * process got there first. Two processes that both found the same dead holder must not both
 * end up holding: each first creates `<path>.takeover-<hash of root>` (a link, so exactly one
 * succeeds), then checks that `path` still holds `root`, then renames its record over it (so
 * `path` never goes missing and no newcomer slips in). A claim left by a taker that died is
 * itself taken over the same way, by a claim on the claim. Returns 'held', 'retry' (the lock
 * changed: look again), or who is taking it over.
 */
export function takeOver(path: string, root: string, record: string, staleMs: number): 'held' | 'retry' | Verdict {
  const passed: string[] = [];
  let target = root;
  for (let depth = 0; depth < maxClaims; depth += 1) {
    const claim = claimPath(path, target);
    if (linkNew(record, claim)) {
      if (readText(path) !== root) {
        removeQuietly(claim);
        return 'retry';
      }
      renameSync(record, path);
      for (const c of [...passed, claim]) removeQuietly(c);
      return 'held';
    }
    const found = readFound(claim);
    if (found.kind !== 'file') return 'retry';
    const verdict = judge(found, staleMs);
    if (!verdict.free) return { free: false, why: `being taken over ${verdict.why.replace(/^held by /, 'by ')}` };
    passed.push(claim);
    target = found.text;
  }
  return { free: false, why: `left by ${maxClaims} takeovers that died midway; remove ${path} and its .takeover- files by hand if no amsync runs` };
}

/**
 * Removes the lock `record` at `path`, and never a record that is not ours: a read then an
 * unlink would remove the record a taker elsewhere renamed over ours between the two (its
 * fence would then report a false loss, and a third run could take the lock meanwhile).
 * First the claim a taker of our record must make (claimPath), so none can start replacing it;
 * one that already has leaves the lock to it. Then the file is renamed aside (atomic: whatever
 * it holds moves whole) and checked: ours is removed, another's (a taker that found our claim
 * stale, after a pause this long) is linked back at once. `beforeRemoval`: a test seam.
 */
export function removeOwn(path: string, record: string, beforeRemoval?: () => void): void {
  const owner = parseOwner(record);
  if (owner === undefined) return;
  const mine = `${path}.${owner.nonce}.release`;
  // Our claim names us (a taker that meets it is told who), with a nonce that is not the lock's.
  writeFileSync(mine, `${JSON.stringify({ ...owner, nonce: `${owner.nonce}-release` })}\n`, { mode: 0o600 });
  try {
    const claim = claimPath(path, record);
    if (!linkNew(mine, claim)) return;
    try {
      beforeRemoval?.();
      removeAside(path, record, `${path}.${owner.nonce}.released`);
    } finally {
      removeQuietly(claim);
    }
  } finally {
    removeQuietly(mine);
  }
}

/** Moves `path` to `aside`, removes it if it holds `record`, else puts it back. */
function removeAside(path: string, record: string, aside: string): void {
  try {
    renameSync(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    // Not ours: back under its name, unless a new lock took the name in the meantime (that one holds now).
    if (readText(aside) !== record) linkNew(aside, path);
  } finally {
    removeQuietly(aside);
  }
}
