import type { ActualState, Kind } from '../model/index.js';
import { normaliseApikey, normaliseSshUser } from '../state/index.js';
import type { ServiceWriter } from './service-writer.js';

/**
 * Re-reads one kind for drift handling. Items that drift in the same wave share one listing
 * (coalesced), so a burst of 409s costs one re-list, not one per item.
 */
export class Refresher {
  private readonly cache = new Map<Kind, Promise<ActualState>>();

  constructor(
    private readonly writer: ServiceWriter,
    private readonly base: ActualState,
  ) {}

  /** Forget cached listings: the next wave sees the service as it is then. */
  nextWave(): void {
    this.cache.clear();
  }

  refresh(kind: Kind): Promise<ActualState> {
    let pending = this.cache.get(kind);
    if (!pending) {
      pending =
        kind === 'sshUser'
          ? this.writer.listSshUsers().then((users) => ({ ...this.base, sshUsers: users.map(normaliseSshUser) }))
          : this.writer.listApikeys().then((keys) => ({ ...this.base, apikeys: keys.map(normaliseApikey) }));
      this.cache.set(kind, pending);
    }
    return pending;
  }
}
