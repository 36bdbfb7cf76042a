/**
 * A check a write request must pass right before it goes on the wire: throws (a
 * LockLostError) when this process no longer holds what lets it write — the host's writer lock,
 * the Lease. Synchronous and cheap: it runs once per write attempt.
 */
export type WriteFence = () => void;

/**
 * The fences of one client. Checked at the last moment, not when a write is queued: a process
 * paused with writes waiting in its limiter (SIGSTOP, a VM pause, a long GC) sends them when
 * it resumes, and by then another writer may hold the lock.
 */
export class WriteFences {
  readonly #fences = new Set<WriteFence>();

  /** Adds a fence; returns its removal (a lock released). */
  add(fence: WriteFence): () => void {
    this.#fences.add(fence);
    return () => {
      this.#fences.delete(fence);
    };
  }

  /** Throws what the first failing fence throws: the write is not sent. */
  check(): void {
    for (const fence of this.#fences) fence();
  }
}
