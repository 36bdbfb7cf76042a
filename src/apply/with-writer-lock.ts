import type { WriteFence } from '../api/index.js';

/** A held writer lock (a lock file on the host, or a Lease's leadership across replicas). */
export interface HeldLock {
  /** Fires when the lock is lost while held: no new write may start after it. */
  readonly lost: AbortSignal;
  /**
   * Throws a LockLostError (and fires `lost`) when the lock is no longer held: run right before
   * each write request is sent (AmClient.fenceWrites). Synchronous and cheap.
   */
  readonly fence: WriteFence;
  release(): Promise<void>;
}

/** `signal`: an interrupt, which ends a wait for another writer at once. */
export type LockAcquirer = (signal?: AbortSignal) => Promise<HeldLock>;

/** Whatever fences a client's writes (AmClient). */
export interface WriteFencing {
  fenceWrites(fence: WriteFence): () => void;
}

/**
 * The lock, its fence on every write `client` sends while it is held: a holder that lost it
 * (taken over after a pause, its file removed) sends nothing more, whatever it had queued.
 */
export function fencingWrites(lock: HeldLock, client: WriteFencing): HeldLock {
  const unfence = client.fenceWrites(lock.fence);
  return {
    lost: lock.lost,
    fence: lock.fence,
    release: async () => {
      unfence();
      await lock.release();
    },
  };
}

/** What a run under the lock adds to its outcome: the lock's loss, reported after the results (exit 1). */
export interface LockOutcome {
  /** The lock was lost while held (a LockLostError naming who holds it now): nothing was sent after it. */
  readonly lockLost?: Error;
}

/**
 * Runs `work` while holding the writer lock. The signal it gets fires on the caller's own
 * signal (an interrupt) or when the lock is lost, whichever comes first. A lock lost meanwhile
 * is told in the outcome (`lockLost`), beside what was applied before it.
 */
export async function withWriterLock<T>(acquire: LockAcquirer, signal: AbortSignal | undefined, work: (signal: AbortSignal) => Promise<T>): Promise<T & LockOutcome> {
  const lock = await acquire(signal);
  try {
    const outcome = await work(signal ? AbortSignal.any([signal, lock.lost]) : lock.lost);
    // Assigned, not spread: an outcome may have getters computed only when read.
    if (lock.lost.aborted && typeof outcome === 'object' && outcome !== null) return Object.assign(outcome, { lockLost: lostReason(lock.lost) });
    return outcome as T & LockOutcome;
  } finally {
    await lock.release();
  }
}

function lostReason(lost: AbortSignal): Error {
  const reason: unknown = lost.reason;
  return reason instanceof Error ? reason : new Error(String(reason));
}
