/** A request a `hold` fault rule keeps waiting (see fault-rules.ts). */
export interface HeldRequest {
  /** The request log's sequence number of the request. */
  readonly seq: number;
  readonly method: string;
  readonly path: string;
  /** `before`: not performed yet; `after`: performed (a write committed), its answer not sent. */
  readonly hold: 'before' | 'after';
  readonly label: string;
}

/**
 * Requests held by a `hold` rule until a test releases them: a process under test can then be
 * killed at a known point of its run (its POST not performed yet, or performed and its answer
 * not received), with no timer to race. Closing the emulator releases them all.
 */
export class Holds {
  readonly #held = new Map<number, { request: HeldRequest; release: () => void }>();
  readonly #waiters = new Set<() => void>();

  /** Resolves once released. */
  wait(request: HeldRequest): Promise<void> {
    return new Promise((resolve) => {
      this.#held.set(request.seq, { request, release: resolve });
      for (const w of this.#waiters) w();
    });
  }

  list(): HeldRequest[] {
    return [...this.#held.values()].map((h) => h.request);
  }

  /** Releases every held request; returns how many. */
  releaseAll(): number {
    const all = [...this.#held.values()];
    this.#held.clear();
    for (const h of all) h.release();
    return all.length;
  }

  /** Resolves with the held requests once at least one is held. */
  async whenHeld(): Promise<HeldRequest[]> {
    while (this.#held.size === 0) {
      await new Promise<void>((resolve) => {
        const w = () => {
          this.#waiters.delete(w);
          resolve();
        };
        this.#waiters.add(w);
      });
    }
    return this.list();
  }
}
