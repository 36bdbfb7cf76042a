import type { AccessService, ActualState, Kind, SecretValue } from '../model/index.js';
import { withoutTokens } from '../state/index.js';

/**
 * Re-reads one kind for drift handling. Items that drift together share one listing
 * (coalesced), so a burst of 409s costs one re-list, not one per item — but a listing is
 * reused only if it started after the failure it is asked about: one that began earlier may
 * predate the write that failed, and would wrongly say the item is not there.
 */
export class Refresher {
  private readonly cache = new Map<Kind, { startedAt: number; listing: Promise<ActualState> }>();
  /** Apikey tokens of the re-reads, by id: an adopted key's token goes to the token sink. */
  private readonly tokens = new Map<number, SecretValue>();
  private clock = 0;

  constructor(
    private readonly writer: AccessService,
    private readonly base: ActualState,
  ) {}

  /** A point in the order of events: call when a failure is seen, pass it to `refresh`. */
  mark(): number {
    this.clock += 1;
    return this.clock;
  }

  refresh(kind: Kind, notBefore: number): Promise<ActualState> {
    const cached = this.cache.get(kind);
    if (cached && cached.startedAt > notBefore) return cached.listing;
    const startedAt = this.mark();
    const listing =
      kind === 'sshUser'
        ? this.writer.listSshUsers().then((users) => ({ ...this.base, sshUsers: users }))
        : this.writer.listApikeys().then((keys) => {
            for (const k of keys) if (k.token) this.tokens.set(k.id, k.token);
            return { ...this.base, apikeys: withoutTokens(keys) };
          });
    this.cache.set(kind, { startedAt, listing });
    return listing;
  }

  /** The token of an apikey seen by a re-read, if one was listed with it. */
  token(id: number): SecretValue | undefined {
    return this.tokens.get(id);
  }
}
