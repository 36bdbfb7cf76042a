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

export type LockAcquirer = () => Promise<HeldLock>;

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

/**
 * Runs `work` while holding the writer lock. The signal it gets fires on the caller's own
 * signal (an interrupt) or when the lock is lost, whichever comes first.
 */
export async function withWriterLock<T>(acquire: LockAcquirer, signal: AbortSignal | undefined, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const lock = await acquire();
  try {
    return await work(signal ? AbortSignal.any([signal, lock.lost]) : lock.lost);
  } finally {
    await lock.release();
  }
}
