import { randomBytes } from 'node:crypto';
import { utimesSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { LockLostError, LockWaitStoppedError, SafetyError } from '../errors.js';
import { judge, linkNew, readFound, readText, removeFolder, removeOwn, removeQuietly, takeOver } from './lock-file.js';
import { ownerName, parseOwner, thisProcess } from './lock-owner.js';
import type { HeldLock } from './with-writer-lock.js';

/** Held for the whole of a run that writes; released when it ends. */
export interface WriterLock extends HeldLock {
  readonly path: string;
}

export interface WriterLockOptions {
  /** How long to wait for another writer before giving up (exit 3). 0: not at all. */
  readonly timeoutMs: number;
  /**
   * A lock whose holder is on another host (a shared volume), or in another pid namespace (a
   * container, or its restart), cannot be checked from here: it is taken over once its file has
   * not been refreshed for this long. The holder refreshes it every stale/2. On this host the
   * holder's process decides, never the file's age.
   */
  readonly staleMs?: number;
  /** Told, in words, when the lock of a holder that died (or stopped refreshing it elsewhere) is taken over. */
  readonly onTakeover?: (message: string) => void;
  /** An interrupt: the wait for another writer ends at once (LockWaitStoppedError), nothing sent. */
  readonly signal?: AbortSignal;
  /** Test seam: called inside release, once no taker can start replacing our record, right before it is removed. */
  readonly onReleasing?: () => void;
}

/**
 * 10 s: only for a holder on another host or in another pid namespace. Shorter would take the
 * lock from a live run elsewhere whose event loop stalled; fencing stops that run's writes if
 * it happens anyway.
 */
const defaultStaleMs = 10_000;
/** How often a run that waits (--lock-timeout) looks again. */
const pollMs = 250;

/** The lock that makes two runs sharing a state file take turns: `<stateFile>.lock`. */
export function writerLockPath(stateFile: string): string {
  return `${stateFile}.lock`;
}

/**
 * Takes the host's writer lock (README, "One writer"): a file holding its owner (host,
 * pid, the process's start time, a random nonce). A second writer waits up to `timeoutMs`, then
 * is refused with exit 3 and a message naming the holder. A holder on this host that died is
 * taken over at once; one that runs, or is paused, never is. The holder checks, right before
 * each write is sent (`fence`), that the file still holds its nonce: a holder that lost the
 * lock sends nothing more.
 */
export async function acquireWriterLock(path: string, options: WriterLockOptions): Promise<WriterLock> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const staleMs = options.staleMs ?? defaultStaleMs;
  const started = performance.now();
  const record = `${JSON.stringify(thisProcess(randomBytes(16).toString('hex'), new Date()))}\n`;
  for (;;) {
    const attempt = tryAcquire(path, record, staleMs);
    if (attempt.held) {
      if (attempt.tookOver !== undefined) options.onTakeover?.(`took over the writer lock ${path}: ${attempt.tookOver}`);
      return holdLock(path, record, staleMs, options.onReleasing);
    }
    const waited = performance.now() - started;
    if (waited >= options.timeoutMs) throw busyError(path, attempt.why, options.timeoutMs);
    if (options.signal?.aborted) throw new LockWaitStoppedError(path, attempt.why);
    // The interrupt ends the wait at once, not at the next poll or the timeout.
    const slept = await sleep(Math.min(pollMs, options.timeoutMs - waited), true, options.signal ? { signal: options.signal } : {}).catch(() => false);
    if (!slept) throw new LockWaitStoppedError(path, attempt.why);
  }
}

type Attempt = { readonly held: true; readonly tookOver?: string } | { readonly held: false; readonly why: string };

/** One try: create the lock file, or take it over from a holder that died; else who holds it. */
function tryAcquire(path: string, record: string, staleMs: number): Attempt {
  const own = `${path}.${parseOwner(record)!.nonce}.tmp`;
  writeFileSync(own, record, { mode: 0o600 });
  try {
    // A few rounds: the lock may be released or change hands while we look.
    for (let round = 0; round < 5; round += 1) {
      if (linkNew(own, path)) return { held: true };
      const found = readFound(path);
      if (found.kind === 'none') continue;
      // NFS: a link whose answer was lost may have been made all the same.
      if (found.kind === 'file' && found.text === record) return { held: true };
      const verdict = judge(found, staleMs);
      if (!verdict.free) return { held: false, why: verdict.why };
      if (found.kind === 'folder') {
        removeFolder(path);
        continue;
      }
      const taken = takeOver(path, found.text, own, staleMs);
      if (taken === 'held') return readText(path) === record ? { held: true, tookOver: verdict.why } : { held: false, why: 'taken by another run at the same moment' };
      if (taken !== 'retry') return { held: false, why: taken.why };
    }
    return { held: false, why: 'changing hands while this run tried to take it' };
  } finally {
    removeQuietly(own);
  }
}

/** A held lock: its fence, its refresh (for takers on other hosts), its release. */
function holdLock(path: string, record: string, staleMs: number, onReleasing?: () => void): WriterLock {
  const controller = new AbortController();
  const fence = (): void => {
    if (controller.signal.aborted) throw controller.signal.reason;
    let text: string | undefined;
    try {
      text = readText(path);
    } catch (error) {
      text = `unreadable: ${(error as NodeJS.ErrnoException).code ?? String(error)}`;
    }
    if (text === record) return;
    const lost = new LockLostError(`the writer lock ${path} was lost: ${nowHolding(text)}; nothing was sent after that`);
    controller.abort(lost);
    throw lost;
  };
  // Only takers on another host look at the file's age; on this host a refresh changes nothing.
  const refresh = setInterval(() => {
    try {
      fence();
      const now = new Date();
      utimesSync(path, now, now);
    } catch {
      clearInterval(refresh);
    }
  }, Math.max(1, Math.floor(staleMs / 2)));
  refresh.unref();
  return {
    path,
    lost: controller.signal,
    fence,
    release: async () => {
      clearInterval(refresh);
      try {
        // Never another's: a lock lost is left to whoever holds it now.
        if (!controller.signal.aborted && readText(path) === record) removeOwn(path, record, onReleasing);
      } catch {
        // Left behind (it cannot be read or removed now): once this process ends, the next run takes it over at once.
      }
    },
  };
}

/** Who holds the lock now, from what its file holds (undefined: no file). */
function nowHolding(text: string | undefined): string {
  if (text === undefined) return 'its file was removed';
  if (text.startsWith('unreadable: ')) return `its file cannot be read (${text.slice('unreadable: '.length)})`;
  const owner = parseOwner(text);
  return owner === undefined ? 'its file now holds something else' : `it is now held by ${ownerName(owner)} (since ${owner.acquiredAt})`;
}

function busyError(path: string, why: string, timeoutMs: number): SafetyError {
  const waited = timeoutMs > 0 ? `; waited ${Math.round(timeoutMs / 1000)} s` : '';
  return new SafetyError(
    'writer_locked',
    `another amsync run is writing to this service: the writer lock ${path} is ${why}${waited}. Nothing was changed; run again when it ends, or wait for it with --lock-timeout MS`,
  );
}
