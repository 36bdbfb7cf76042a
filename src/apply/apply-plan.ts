import type { AccessService, ActualState, Change, ChangeResult, DesiredApikey, DesiredSshUser, DesiredState, Plan, SecretValue } from '../model/index.js';
import type { PasswordFingerprints, PlanPolicy } from '../plan/index.js';
import PQueue from 'p-queue';
import { ApiError, stoppedBeforeSending } from '../api/index.js';
import { ChangeWriter } from './change-writer.js';
import { DriftResolver, driftNote, type Outcome } from './drift-resolver.js';
import { errorCode, errorSummary } from './error-summary.js';
import type { LateCreateLooks } from './late-create.js';
import { Refresher } from './refresher.js';
import { orderChanges, type ChangeOrder } from './change-order.js';
import type { PasswordRecorder } from './password-recorder.js';
import { TouchedIds } from './touched-ids.js';

export interface ApplyOptions {
  readonly writer: AccessService;
  readonly desired: DesiredState;
  /** The listing the plan was computed from. */
  readonly actual: ActualState;
  readonly policy: PlanPolicy;
  readonly passwords?: PasswordRecorder;
  /**
   * Receives each created apikey's token (the token sink); false when it could not be kept
   * (then the delete of a key that create replaces is not sent).
   */
  readonly onToken?: (name: string, token: SecretValue) => Promise<boolean | void>;
  /** Keeps a generated password the service accepted (ChangeWriterDeps.onGeneratedPassword). */
  readonly onGeneratedPassword?: (username: string, id: number, password: SecretValue) => Promise<void>;
  /** Awaited before a successor's create is sent (ChangeWriterDeps.beforeSuccessor). */
  readonly beforeSuccessor?: (change: Change) => Promise<void>;
  /** The fingerprints the plan was made with; drift re-plans use them too. */
  readonly fingerprints?: PasswordFingerprints;
  /** Called before each write request is sent (the audit log), drift re-writes included. */
  readonly onAttempt?: (change: Change) => void;
  /** Called as each result is known (logs, metrics). */
  readonly onResult?: (result: ChangeResult) => void;
  /**
   * Aborted on an interrupt, a lost lease or a run deadline: no change starts after it fires.
   * The writer's client carries the same stop (AmClient.withStop), so a started change whose
   * request still waits in its queue is never sent either; writes already sent finish. Every
   * change none of whose writes was sent is reported skipped and `notStarted`.
   */
  readonly signal?: AbortSignal;
  /**
   * Changes being written at once. Set it to the client's concurrency (or a little above, to
   * keep the client busy): more would only wait in the client's queue.
   */
  readonly maxInFlight?: number;
  /**
   * Further looks for an apikey create whose answer was lost and whose key is not listed yet
   * (see LateCreateLooks; lateCreateWaits makes the waits from the client's request timeout).
   * Without it, such a create fails at once, not sent again.
   */
  readonly lateCreate?: LateCreateLooks;
}

const defaultMaxInFlight = 16;

/**
 * Runs a plan: creates and updates first, deletes last, in dependency waves (see change-order.ts).
 * One item's failure does not stop the others, and every change gets a result. Drift met
 * on the way (409, 404, a lost create response) is handled once per item by re-reading the
 * kind and re-planning that item: bounded, never a loop (DriftResolver).
 */
export async function applyPlan(plan: Plan, options: ApplyOptions): Promise<ChangeResult[]> {
  // Nothing to do: no lookup tables over the whole state (at 100k items, tens of MB for nothing).
  if (plan.changes.length === 0) return [];
  return new PlanRun(plan, options).run();
}

/** The declared item a change is about. Apikey names are not unique: a pinned id tells twins apart. */
class DeclaredItems {
  readonly #users: ReadonlyMap<string, DesiredSshUser>;
  readonly #keysById: ReadonlyMap<number, DesiredApikey>;
  readonly #keysByName: ReadonlyMap<string, DesiredApikey>;

  constructor(desired: DesiredState) {
    this.#users = new Map(desired.sshUsers.map((u) => [u.username, u]));
    this.#keysById = new Map(desired.apikeys.flatMap((k) => (k.id === undefined ? [] : [[k.id, k] as const])));
    this.#keysByName = new Map(desired.apikeys.filter((k) => k.id === undefined).map((k) => [k.name, k]));
  }

  of(change: Change): DesiredSshUser | DesiredApikey | undefined {
    if (change.kind === 'sshUser') return this.#users.get(change.key);
    return (change.id === null ? undefined : this.#keysById.get(change.id)) ?? this.#keysByName.get(change.key);
  }
}

/** One run of a plan: its results so far, the ids it claimed, and the waves still to go. */
class PlanRun {
  readonly #plan: Plan;
  readonly #options: ApplyOptions;
  readonly #items: DeclaredItems;
  readonly #touched = new TouchedIds();
  readonly #writer: ChangeWriter;
  readonly #refresher: Refresher;
  readonly #drift: DriftResolver;
  readonly #results = new Map<number, ChangeResult>();
  readonly #order: ChangeOrder;

  constructor(plan: Plan, options: ApplyOptions) {
    this.#plan = plan;
    this.#options = options;
    this.#items = new DeclaredItems(options.desired);
    this.#writer = new ChangeWriter({ writer: options.writer, touched: this.#touched, ...(options.passwords ? { passwords: options.passwords } : {}), ...(options.onToken ? { onToken: options.onToken } : {}), ...(options.onAttempt ? { onAttempt: options.onAttempt } : {}), ...(options.onGeneratedPassword ? { onGeneratedPassword: options.onGeneratedPassword } : {}), ...(options.beforeSuccessor ? { beforeSuccessor: options.beforeSuccessor } : {}) });
    this.#refresher = new Refresher(options.writer, options.actual);
    this.#drift = new DriftResolver({ ...options, refresher: this.#refresher, touched: this.#touched, writer: this.#writer });
    this.#order = orderChanges(plan.changes, options.actual);
  }

  async run(): Promise<ChangeResult[]> {
    // Changes are handed to the client as it can take them, not all at once: a change still
    // waiting here when the signal fires is never started, and one whose request waits in the
    // client's queue is stopped there (not_sent).
    const queue = new PQueue({ concurrency: this.#options.maxInFlight ?? defaultMaxInFlight });
    const waves = [...this.#order.before, this.#order.deletes, ...this.#order.after];
    for (const wave of waves) await queue.addAll(wave.map((i) => () => this.#runChange(i)));
    return this.#plan.changes.map((_, i) => this.#results.get(i)!);
  }

  async #runChange(i: number): Promise<void> {
    const change = this.#plan.changes[i]!;
    const skipped = (error: string): ChangeResult => ({ kind: change.kind, key: change.key, action: change.action, status: 'skipped', id: change.id, error });
    const notStarted = (why = abortReason(this.#options.signal)): ChangeResult => ({ ...skipped(`not started: ${why}`), notStarted: true });
    const dep = this.#order.dependsOn.get(i);
    const depResult = dep === undefined ? undefined : this.#results.get(dep);
    if (this.#options.signal?.aborted) return this.#finish(i, notStarted());
    if (depResult && depResult.status !== 'applied') {
      const d = this.#plan.changes[dep!]!;
      return this.#finish(i, skipped(`waits for the ${d.action} of ${d.kind} "${d.key}", which did not apply`));
    }
    if (change.replaced === true) {
      // The old key goes only once its successor exists and the successor's token is in the sink.
      const successor = dep === undefined ? undefined : this.#plan.changes[dep];
      if (successor === undefined || depResult === undefined || !this.#writer.tokenDelivered(successor)) {
        const kept = skipped("kept: its successor's token was not written to the token sink (tokensDir), so this key is still the one in use");
        return this.#finish(i, typeof depResult?.id === 'number' ? { ...kept, replacedBy: depResult.id } : kept);
      }
    }
    let outcome: Outcome;
    try {
      outcome = await this.#applyOne(change);
    } catch (error) {
      // Started, but stopped in the client's queue before its first write went out (see #applyOne).
      // The run's signal says why, or (a write fence that refused it: a lost lock or Lease) the error.
      if (stoppedBeforeSending(error)) return this.#finish(i, notStarted(this.#options.signal?.aborted ? undefined : notSentReason(error)));
      throw error;
    }
    // A successor whose token the sink did not keep is not "the" key: its result says so (a rotation is then not recorded).
    const lost = change.replaces !== undefined && outcome.status === 'applied' && !this.#writer.tokenDelivered(change) ? { tokenLost: true as const } : {};
    const replacement = change.replaces !== undefined ? { replaces: change.replaces, ...lost } : change.replaced === true && typeof depResult?.id === 'number' ? { replacedBy: depResult.id } : {};
    this.#finish(i, { kind: change.kind, key: change.key, action: change.action, ...outcome, ...replacement });
  }

  #finish(i: number, result: ChangeResult): void {
    this.#results.set(i, result);
    this.#options.onResult?.(result);
  }

  /**
   * Throws the client's `not_sent` when the run was stopped before this change's write (or the
   * read before a delete) went out: the service received no write of it, and #runChange
   * reports it not started.
   */
  async #applyOne(change: Change): Promise<Outcome> {
    const item = this.#items.of(change);
    if (change.action === 'delete') {
      try {
        const settled = await this.#verifyDelete(change);
        if (settled) return settled;
      } catch (error) {
        if (stoppedBeforeSending(error)) throw error;
        return { status: 'failed', id: change.id, error: `not deleted: re-reading it failed: ${errorSummary(error)}` };
      }
    }
    try {
      const outcome = await this.#writer.write(change, item);
      return { status: 'applied', id: outcome.id ?? change.id };
    } catch (error) {
      if (stoppedBeforeSending(error)) throw error;
      return this.#afterFailedWrite(change, item, error);
    }
  }

  /** Deleted by someone else (a fresh listing no longer shows it, or the DELETE's 404): done, and its password fingerprint goes too. */
  #alreadyDeleted(change: Change): Outcome {
    if (change.kind === 'sshUser') this.#options.passwords?.forget(change.id!);
    return { status: 'applied', id: change.id, drift: 'was already deleted' };
  }

  /** A write failed: already gone (a delete's 404), drift to resolve, or a plain failure. */
  async #afterFailedWrite(change: Change, item: DesiredSshUser | DesiredApikey | undefined, error: unknown): Promise<Outcome> {
    const code = errorCode(error);
    if (change.action === 'delete' && code === 'not_found') return this.#missing(change, 'DELETE');
    // A rename in place (renamedFrom:) that the service refuses fails as itself: re-planning it
    // could adopt another item that has the name, or create one anew, which the rename is
    // there to avoid (README, "The desired-state file").
    if (change.action === 'update' && change.renamedFrom !== undefined) return { status: 'failed', id: change.id, error: renameRefused(change, error) };
    const drifted =
      item !== undefined &&
      ((change.action === 'create' && (code === 'conflict' || code === 'unknown_outcome')) || (change.action === 'update' && (code === 'conflict' || code === 'not_found')));
    if (!drifted) return { status: 'failed', id: change.id, error: errorSummary(error) };
    const failedAt = this.#refresher.mark();
    try {
      return await this.#drift.resolve(change, item, code!, failedAt);
    } catch (second) {
      return { status: 'failed', id: change.id, error: errorSummary(second), drift: driftNote(change, code!) };
    }
  }

  /**
   * A delete is sent only for an item that is still what the plan meant to delete: re-read
   * by id (one GET per delete; deletes are few, bounded by the deletion budget). Returns the
   * outcome when no DELETE is to be sent (refused, already gone, or a contradiction), or
   * undefined to go ahead.
   */
  async #verifyDelete(change: Change): Promise<Outcome | undefined> {
    const id = change.id!;
    const refused = (why: string): Outcome => ({ status: 'skipped', id, error: 'not deleted: the item changed since the listing', drift: why });
    const claimed = `id ${id} was adopted or written by this run; not deleted`;
    if (this.#touched.has(change.kind, id)) return refused(claimed);
    const writer = this.#options.writer;
    const current = change.kind === 'sshUser' ? await writer.fetchSshUser(id) : await writer.fetchApikey(id);
    if (current === undefined) return this.#missing(change, 'GET by id');
    const name = 'username' in current ? current.username : current.name;
    // The name is what the plan saw: a rename since the listing (into a declared name or any
    // other) means this is no longer the item the plan chose to delete.
    if (name !== change.key) return refused(`now named "${name}" (renamed outside amsync since the listing); not deleted`);
    // Checked again: a create or drift re-read of this run may have claimed it meanwhile.
    return this.#touched.has(change.kind, id) ? refused(claimed) : undefined;
  }

  /**
   * A 404 for an item the plan's listing showed, from the by-id read or from the DELETE itself.
   * That alone proves nothing: a gateway, or a service version without the item route, answers
   * 404 for items that exist. A fresh look decides (README, "Safety"): gone from a listing read
   * since, it was deleted (by someone else, or by this DELETE); still listed, the 404 is a
   * contradiction and the delete fails — reporting it deleted would leave the access in place
   * behind a green run, every run.
   */
  async #missing(change: Change, request: 'GET by id' | 'DELETE'): Promise<Outcome> {
    const id = change.id!;
    let listed: boolean;
    try {
      listed = await this.#refresher.stillListed(change.kind, id);
    } catch (error) {
      // Stopped before the fresh listing went out: the delete's own fate is "not started" when
      // no DELETE was sent; after a DELETE's 404 it stays unconfirmed (failed) below.
      if (request === 'GET by id' && stoppedBeforeSending(error)) throw error;
      const what = request === 'DELETE' ? 'not confirmed deleted: the DELETE answered 404 and' : 'not deleted: the GET by id answered 404 and';
      return { status: 'failed', id, error: `${what} re-reading it failed: ${errorSummary(error)}` };
    }
    if (!listed) return this.#alreadyDeleted(change);
    const sent = request === 'DELETE' ? 'the DELETE was sent and answered 404' : 'no DELETE was sent';
    return {
      status: 'failed',
      id,
      error:
        `not deleted: ${request} ${id} answered 404 (not found), yet a fresh listing still shows id ${id}, so it is not gone (${sent}): ` +
        "the service's item route is missing (a service version without it) or a gateway in front of the service answers 404 for it; check the service version and any proxy, then run again",
    };
  }
}

/** Why a rename in place failed, and that nothing else was done about it. */
function renameRefused(change: Change, error: unknown): string {
  const why = errorCode(error) === 'conflict' ? `the name "${change.key}" is taken (409)` : errorCode(error) === 'not_found' ? `id ${change.id} no longer exists (404)` : errorSummary(error);
  return `the service refused to rename ${change.kind} "${change.renamedFrom}" (id ${change.id}) to "${change.key}": ${why}; nothing was deleted or created instead: free the name (or remove renamedFrom) and run again`;
}

function abortReason(signal: AbortSignal | undefined): string {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason.message : typeof reason === 'string' ? reason : 'the run was stopped';
}

/** Why a write was held back before the wire, from the client's `not_sent` (its cause, when a fence refused it). */
function notSentReason(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  if (cause instanceof Error) return cause.message;
  const detail = error instanceof ApiError ? error.detail : undefined;
  return detail?.startsWith('not sent: ') ? detail.slice('not sent: '.length) : 'the run was stopped';
}
