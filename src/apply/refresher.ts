import type { AccessService, ActualState, Kind, SecretValue } from '../model/index.js';
import { withoutTokens } from '../state/index.js';

/**
 * Re-reads one kind for drift handling and for the fresh look of a delete that met a 404.
 * Items that drift together share one listing (coalesced), so a burst of 409s costs one
 * re-list, not one per item — but a listing is reused only if it started after the failure
 * it is asked about: one that began earlier may predate the write that failed, and would
 * wrongly say the item is not there.
 */
export class Refresher {
  private readonly cache = new Map<Kind, { startedAt: number; listing: Promise<ActualState> }>();
  /** Apikey tokens of the re-reads, by id: an adopted key's token goes to the token sink. */
  private readonly tokens = new Map<number, SecretValue>();
  private clock = 0;
  /** The mark of the first by-id 404 of each kind met by a delete (see stillListed). */
  private readonly firstMissing = new Map<Kind, number>();

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

  /**
   * A fresh look for a delete whose by-id read answered 404: whether a listing read after the
   * first such 404 of this kind still shows `id`. One re-list per kind per run, shared by
   * every delete that meets a 404 (a gateway without the item route 404s them all). A listing
   * read since the plan's that no longer shows the id is proof it is gone; one read after the
   * 404 that still shows it contradicts the 404. A delete whose 404 came while the shared
   * listing was being read may see it listed although another client deleted it meanwhile:
   * that delete then fails rather than being claimed, and the next run has nothing left to do
   * — a false failure at worst, never a false "deleted".
   */
  async stillListed(kind: Kind, id: number): Promise<boolean> {
    let since = this.firstMissing.get(kind);
    if (since === undefined) {
      since = this.mark();
      this.firstMissing.set(kind, since);
    }
    const fresh = await this.refresh(kind, since);
    const items: readonly { id: number }[] = kind === 'sshUser' ? fresh.sshUsers : fresh.apikeys;
    return items.some((x) => x.id === id);
  }

  /** The token of an apikey seen by a re-read, if one was listed with it. */
  token(id: number): SecretValue | undefined {
    return this.tokens.get(id);
  }
}
