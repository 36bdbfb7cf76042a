/** A held writer lock (a lock file on the host, or a Lease's leadership across replicas). */
export interface HeldLock {
  /** Fires when the lock is lost while held: no new write may start after it. */
  readonly lost: AbortSignal;
  release(): Promise<void>;
}

export type LockAcquirer = () => Promise<HeldLock>;

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
