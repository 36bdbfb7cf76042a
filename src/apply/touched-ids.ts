import type { Change } from '../model/index.js';

/**
 * Ids a run wrote, created or adopted. A verified delete never deletes one of them: whatever
 * this run claimed as a declared item is not the unmanaged item the plan chose to delete.
 */
export class TouchedIds {
  readonly #ids = { sshUser: new Set<number>(), apikey: new Set<number>() };

  add(kind: Change['kind'], id: number | null | undefined): void {
    if (id !== null && id !== undefined) this.#ids[kind].add(id);
  }

  has(kind: Change['kind'], id: number): boolean {
    return this.#ids[kind].has(id);
  }
}
