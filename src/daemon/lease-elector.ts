import { LockLostError } from '../errors.js';
import type { Timers } from '../time/index.js';

/** What the elector reads and writes: the fields of a coordination.k8s.io/v1 Lease it uses. */
export interface LeaseRecord {
  readonly holderIdentity?: string;
  readonly leaseDurationSeconds?: number;
  readonly acquireTime?: Date;
  readonly renewTime?: Date;
  readonly leaseTransitions?: number;
  /** The API server's optimistic-concurrency token: an update with a stale one is refused. */
  readonly resourceVersion?: string;
}

/**
 * One Lease object. `update` must fail with LeaseConflictError when `resourceVersion` is not
 * the current one, as the API server does (409): that compare-and-swap is what guarantees a
 * single holder. amsync adds no consensus of its own on top.
 */
export interface LeaseStore {
  /** undefined when the Lease does not exist (404). */
  get(): Promise<LeaseRecord | undefined>;
  /** Fails with LeaseConflictError when it exists already. */
  create(record: LeaseRecord): Promise<LeaseRecord>;
  update(record: LeaseRecord): Promise<LeaseRecord>;
  /** Where the lease lives, for messages: `lease:NAMESPACE/NAME`. */
  readonly describe: string;
}

export class LeaseConflictError extends Error {
  readonly code = 'lease_conflict';
  constructor(message = 'the Lease changed meanwhile (409 Conflict)') {
    super(message);
    this.name = 'LeaseConflictError';
  }
}

export interface ElectorOptions {
  readonly store: LeaseStore;
  /** This replica (the pod name): what `holderIdentity` holds while it leads. */
  readonly identity: string;
  /** How long a holder's claim is honoured after its last renewal. @default 60000 (Crossplane) */
  readonly leaseDurationMs?: number;
  /** A leader that could not renew for this long stops writing. @default 50000 */
  readonly renewDeadlineMs?: number;
  /** How often to try to acquire or renew. @default 10000 */
  readonly retryPeriodMs?: number;
  readonly timers: Timers;
  /** Leadership gained (true) or lost (false). */
  readonly onChange?: (leading: boolean, detail: string) => void;
  /** A failed call to the API server (network, 403…): logged, and retried next period. */
  readonly onError?: (error: unknown) => void;
}

/**
 * Leader election on one Lease, the algorithm of client-go's leaderelection (which Flux and
 * Crossplane use): try to acquire or renew every retry period; a lease held by another is
 * free only once it has not changed for leaseDuration, measured on this replica's own
 * monotonic clock from when this replica saw it change (clocks of two nodes are never
 * compared); a leader that cannot renew within renewDeadline (< leaseDuration) steps down
 * before anyone else may take over, so two replicas never write at once.
 */
export class LeaseElector {
  readonly #o: Required<Omit<ElectorOptions, 'onChange' | 'onError'>> & Pick<ElectorOptions, 'onChange' | 'onError'>;
  #observed: { record: string; at: number } | undefined;
  #leading = false;
  #lastRenew = 0;
  /** The wall clock at the last renewal: see #sinceRenew. */
  #lastRenewWall = 0;
  #term: AbortController = abortedController('not the leader');
  #timer: unknown;
  /** Fires renewDeadline after the last renewal: steps down even while a call to the API server hangs. */
  #stepDown: unknown;
  #stopped = false;
  #tick: Promise<void> = Promise.resolve();

  constructor(options: ElectorOptions) {
    this.#o = { leaseDurationMs: 60_000, renewDeadlineMs: 50_000, retryPeriodMs: 10_000, ...options };
    if (!(this.#o.renewDeadlineMs < this.#o.leaseDurationMs)) {
      throw new Error(`renewDeadlineMs (${this.#o.renewDeadlineMs}) must be below leaseDurationMs (${this.#o.leaseDurationMs})`);
    }
  }

  get leading(): boolean {
    return this.#leading;
  }

  /** Aborted the moment leadership of the current term is lost: writes check it. */
  get term(): AbortSignal {
    return this.#term.signal;
  }

  /**
   * The Lease's write fence, run right before each write request is sent (AmClient.fenceWrites):
   * throws a LockLostError unless this replica leads and its last renewal is within the renew
   * deadline, read on the clock at that moment. The step-down timer alone is not enough: a
   * process paused past its deadline (SIGSTOP, a VM pause, a long GC) resumes with all its
   * overdue timers firing in due order, the limiter's before the step-down's, and would send
   * the writes it had queued after the lease expired for the others.
   */
  readonly fence = (): void => {
    if (this.#leading && this.#sinceRenew() >= this.#o.renewDeadlineMs) this.#lose(this.#deadlineMissed());
    if (this.#leading) return;
    const reason: unknown = this.#term.signal.reason;
    throw new LockLostError(reason instanceof Error ? reason.message : 'not the leader');
  };

  /** Starts the loop; resolves after the first attempt, so a first run knows its role. */
  start(): Promise<void> {
    this.#stopped = false;
    return this.tick().then(() => this.#schedule(this.#o.retryPeriodMs));
  }

  /** One attempt to acquire or renew, then the next is scheduled. Tests call it directly. */
  tick(): Promise<void> {
    this.#tick = this.#tick.then(() => this.#attempt());
    return this.#tick;
  }

  /**
   * Stops; a leader gives the lease up (holder cleared) so a successor need not wait for it
   * to expire, as client-go's ReleaseOnCancel does.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) this.#o.timers.clearTimeout(this.#timer);
    this.#clearStepDown();
    await this.#tick;
    if (!this.#leading) return;
    this.#lose('stopping');
    try {
      const current = await this.#o.store.get();
      if (current?.holderIdentity === this.#o.identity) {
        await this.#o.store.update({ ...current, holderIdentity: '', leaseDurationSeconds: 1, renewTime: new Date(this.#o.timers.wallNow()) });
      }
    } catch (error) {
      this.#o.onError?.(error);
    }
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = this.#o.timers.setTimeout(() => {
      void this.tick().then(() => this.#schedule(this.#o.retryPeriodMs));
    }, ms);
  }

  async #attempt(): Promise<void> {
    if (this.#stopped) return;
    const now = this.#o.timers.now();
    const wall = this.#o.timers.wallNow();
    let renewed = false;
    try {
      // Bounded: a call that hangs (a partition that drops packets) must neither keep this
      // replica leading nor stop it from trying again. A late answer is ignored; the Lease it
      // may have written names this replica, which then renews or lets it expire.
      renewed = await this.#bounded(this.#tryAcquireOrRenew(now));
    } catch (error) {
      if (!(error instanceof LeaseConflictError)) this.#o.onError?.(error);
    }
    if (renewed && this.#o.timers.now() - now < this.#o.renewDeadlineMs) {
      this.#lastRenew = now;
      this.#lastRenewWall = wall;
      if (!this.#leading) this.#gain();
      this.#armStepDown();
    } else if (this.#leading && this.#sinceRenew() >= this.#o.renewDeadlineMs) {
      this.#lose(this.#deadlineMissed());
    } else if (this.#leading && !renewed && this.#observedHolder !== this.#o.identity && this.#observedHolder) {
      // Someone else holds it now (our claim expired while we could not reach the server).
      this.#lose(`${this.#o.store.describe} is held by ${this.#observedHolder}`);
    }
  }

  #observedHolder: string | undefined;

  /** The attempt, or an error once retryPeriod has passed without its answer. */
  #bounded<T>(attempt: Promise<T>): Promise<T> {
    let handle: unknown;
    const timeout = new Promise<never>((_resolve, reject) => {
      handle = this.#o.timers.setTimeout(() => reject(new Error(`no answer from the API server about ${this.#o.store.describe} within ${Math.round(this.#o.retryPeriodMs / 1000)} s`)), this.#o.retryPeriodMs);
    });
    attempt.catch(() => undefined);
    return Promise.race([attempt, timeout]).finally(() => this.#o.timers.clearTimeout(handle));
  }

  /**
   * The leader's own deadline, on a timer rather than at the next attempt: renewDeadline after
   * the last renewal (measured from before that renewal was sent) it stops writing, whatever
   * its calls to the API server are doing, and so always before leaseDuration has passed for
   * the others, who count from when they saw that renewal.
   */
  #armStepDown(): void {
    this.#clearStepDown();
    const at = this.#lastRenew + this.#o.renewDeadlineMs;
    this.#stepDown = this.#o.timers.setTimeout(() => {
      this.#stepDown = undefined;
      if (this.#leading && this.#sinceRenew() >= this.#o.renewDeadlineMs) this.#lose(this.#deadlineMissed());
    }, Math.max(0, at - this.#o.timers.now()));
  }

  /**
   * Time since the last renewal, by whichever clock says more. The monotonic clock does not
   * advance while the machine is suspended (Linux's CLOCK_MONOTONIC), so a leader resumed from
   * a suspend would think it still within its deadline while the others, whose clocks ran, see
   * the lease expired; the wall clock runs through a suspend. A wall clock stepped forward makes
   * it step down early, the safe side; one stepped back is caught by the monotonic one.
   */
  #sinceRenew(): number {
    const { timers } = this.#o;
    return Math.max(timers.now() - this.#lastRenew, timers.wallNow() - this.#lastRenewWall);
  }

  #deadlineMissed(): string {
    return `could not renew ${this.#o.store.describe} for ${Math.round(this.#o.renewDeadlineMs / 1000)} s`;
  }

  #clearStepDown(): void {
    if (this.#stepDown !== undefined) this.#o.timers.clearTimeout(this.#stepDown);
    this.#stepDown = undefined;
  }

  async #tryAcquireOrRenew(now: number): Promise<boolean> {
    const { store, identity } = this.#o;
    const wall = new Date(this.#o.timers.wallNow());
    const durationSeconds = Math.ceil(this.#o.leaseDurationMs / 1000);
    const current = await store.get();
    if (!current) {
      await store.create({ holderIdentity: identity, leaseDurationSeconds: durationSeconds, acquireTime: wall, renewTime: wall, leaseTransitions: 0 });
      this.#observe({ holderIdentity: identity, renewTime: wall }, now);
      return true;
    }
    this.#observe(current, now);
    const holder = current.holderIdentity ?? '';
    const theirs = holder !== '' && holder !== identity;
    const heldFor = ((current.leaseDurationSeconds ?? durationSeconds) * 1000);
    if (theirs && this.#observed !== undefined && this.#observed.at + heldFor > now) return false;
    const mine = holder === identity;
    await store.update({
      ...current,
      holderIdentity: identity,
      leaseDurationSeconds: durationSeconds,
      acquireTime: mine ? (current.acquireTime ?? wall) : wall,
      renewTime: wall,
      leaseTransitions: mine ? (current.leaseTransitions ?? 0) : (current.leaseTransitions ?? 0) + 1,
    });
    this.#observedHolder = identity;
    return true;
  }

  /** Remembers when the record last changed, on our own clock. */
  #observe(record: LeaseRecord, now: number): void {
    const key = `${record.holderIdentity ?? ''}|${record.renewTime?.toISOString() ?? ''}|${record.resourceVersion ?? ''}`;
    this.#observedHolder = record.holderIdentity;
    if (this.#observed?.record !== key) this.#observed = { record: key, at: now };
  }

  #gain(): void {
    this.#leading = true;
    this.#term = new AbortController();
    this.#o.onChange?.(true, `acquired ${this.#o.store.describe} as ${this.#o.identity}`);
  }

  #lose(why: string): void {
    if (!this.#leading) return;
    this.#clearStepDown();
    this.#leading = false;
    this.#term.abort(new Error(`leadership lost: ${why}`));
    this.#o.onChange?.(false, why);
  }
}

function abortedController(reason: string): AbortController {
  const c = new AbortController();
  c.abort(new Error(reason));
  return c;
}
