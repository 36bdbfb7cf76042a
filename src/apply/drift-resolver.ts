import type { ActualState, Change, ChangeResult, DesiredApikey, DesiredSshUser, DesiredState, SecretValue } from '../model/index.js';
import { noFingerprints, type PasswordFingerprints, type PasswordPolicy, type PlanPolicy } from '../plan/index.js';
import type { ChangeWriter } from './change-writer.js';
import { errorSummary } from './error-summary.js';
import { lookAgain, type LateCreateLooks } from './late-create.js';
import type { Refresher } from './refresher.js';
import { replanItem } from './replan-item.js';
import type { TouchedIds } from './touched-ids.js';

/** A result without the change's identity (kind, key, action), which the caller adds. */
export type Outcome = Omit<ChangeResult, 'kind' | 'key' | 'action'>;

type Item = DesiredSshUser | DesiredApikey;

export interface DriftResolverDeps {
  readonly desired: DesiredState;
  /** The listing the plan was computed from: tells a key this run created from one that was there. */
  readonly actual: ActualState;
  readonly policy: PlanPolicy;
  readonly fingerprints?: PasswordFingerprints;
  readonly onToken?: (name: string, token: SecretValue) => Promise<boolean | void>;
  readonly refresher: Refresher;
  readonly touched: TouchedIds;
  readonly writer: ChangeWriter;
  /** Further looks for a lost apikey create not listed yet; none when absent. */
  readonly lateCreate?: LateCreateLooks;
  /** The run's stop: ends those looks at once. */
  readonly signal?: AbortSignal;
}

type Found = { outcome: Outcome } | { item: Item; note: string; fresh?: ActualState; listed?: readonly { id: number }[] };

/**
 * Drift met while writing (409, 404, a lost create response) is handled once per item: one
 * re-read of the kind, one re-plan of that item with the same pure planner, at most one more
 * write. Bounded, never a loop.
 */
export class DriftResolver {
  readonly #deps: DriftResolverDeps;
  readonly #originalKeyIds: ReadonlySet<number>;

  constructor(deps: DriftResolverDeps) {
    this.#deps = deps;
    this.#originalKeyIds = new Set(deps.actual.apikeys.map((k) => k.id));
  }

  async resolve(change: Change, item: Item, code: string, failedAt: number): Promise<Outcome> {
    let fresh: ActualState;
    try {
      fresh = await this.#deps.refresher.refresh(change.kind, failedAt);
    } catch (error) {
      // The re-read failed or was never sent (an interrupt): the drift stays as it was met, and
      // the note says so rather than that it was looked up.
      return { status: 'failed', id: change.id, error: errorSummary(error), drift: driftNote(change, code, false) };
    }
    const listed: readonly { id: number }[] = change.kind === 'sshUser' ? fresh.sshUsers.filter((u) => u.username === change.key) : fresh.apikeys.filter((k) => k.name === change.key);
    // Whatever now carries the declared name is this item's, whatever happens next.
    for (const x of listed) this.#deps.touched.add(change.kind, x.id);
    let note = driftNote(change, code);
    let passwords: PasswordPolicy = this.#deps.policy.passwords;
    if (change.action === 'create') {
      // Adopting an item we did not create: its password is unknown, so set the declared one.
      passwords = { mode: 'rotate' };
      if (code === 'unknown_outcome') {
        const found = await this.#findLostCreate(change, item, listed);
        if ('outcome' in found) return found.outcome;
        ({ item, note } = found);
        return this.#replanAndWrite(change, item, found.fresh ?? fresh, found.listed ?? listed, passwords, note);
      } else if (listed[0]) {
        note = `existed already as id ${listed[0].id} (created outside amsync); adopted it`;
      }
    }
    return this.#replanAndWrite(change, item, fresh, listed, passwords, note);
  }

  /** A create whose answer was lost: find what it made, or decide it made nothing. */
  async #findLostCreate(change: Change, item: Item, listed: readonly { id: number }[]): Promise<Found> {
    const note = driftNote(change, 'unknown_outcome');
    const created = this.#createdBy(change, listed);
    if (created.length === 0) {
      // Apikey names are not unique: a POST the service is still processing could land after
      // this listing, and a second POST would make a duplicate. Look again while this run
      // holds the writer lock, so that it lands here and is adopted.
      if (change.kind === 'apikey') return this.#findLateKey(change, item as DesiredApikey, note);
      // Usernames are unique: a second POST is answered 409 if the first one landed.
      const outcome = await this.#deps.writer.write(change, item);
      return { outcome: { status: 'applied', id: outcome.id ?? null, drift: "the create's response was lost and no such user was found; created it again" } };
    }
    if (created.length > 1) {
      return { outcome: { status: 'failed', id: null, error: `the create's response was lost and ${created.length} items named "${change.key}" now exist (ids ${created.map((x) => x.id).join(', ')}); pin one with \`id:\``, drift: note } };
    }
    const id = created[0]!.id;
    if (change.kind === 'sshUser') return { item, note: `the create's response was lost; found it as id ${id} and adopted it` };
    return this.#adoptKey(change, item as DesiredApikey, id, `the create's response was lost; found it as id ${id} and adopted it`);
  }

  /** What carries the declared name and was not there when the plan was made. */
  #createdBy(change: Change, listed: readonly { id: number }[]): readonly { id: number }[] {
    return change.kind === 'sshUser' ? listed : listed.filter((x) => !this.#originalKeyIds.has(x.id));
  }

  /** The further looks for a lost apikey create (LateCreateLooks); failed, never sent again, if it does not show. */
  async #findLateKey(change: Change, item: DesiredApikey, note: string): Promise<Found> {
    const unseen = (looked: string) => ({
      outcome: { status: 'failed' as const, id: null, error: `the create's response was lost and the key is not listed${looked}; not sent again, so it cannot be duplicated: the next run adopts or creates it`, drift: note },
    });
    const { lateCreate, refresher, signal } = this.#deps;
    if (!lateCreate || lateCreate.waitsMs.length === 0) return unseen('');
    const look = async () => {
      // A fresh mark: each look is a new listing (shared with other items looking at that time).
      const fresh = await refresher.refresh('apikey', refresher.mark());
      const created = this.#createdBy(change, fresh.apikeys.filter((k) => k.name === change.key));
      return created.length === 0 ? undefined : { fresh, created };
    };
    // A look the run's stop cut short ends the waiting like a stop during a wait.
    const { found, waitedMs, stopped } = await lookAgain(lateCreate, () => look().catch((error: unknown) => (signal?.aborted ? undefined : Promise.reject(error))), signal);
    if (!found) return unseen(stopped ? '' : ` after looking for ${seconds(waitedMs)}`);
    for (const x of found.created) this.#deps.touched.add('apikey', x.id);
    if (found.created.length > 1) {
      return { outcome: { status: 'failed', id: null, error: `the create's response was lost and ${found.created.length} items named "${change.key}" now exist (ids ${found.created.map((x) => x.id).join(', ')}); pin one with \`id:\``, drift: note } };
    }
    const id = found.created[0]!.id;
    const adopted = await this.#adoptKey(change, item, id, `the create's response was lost; found it as id ${id} on a later look (${seconds(waitedMs)} after the first) and adopted it`);
    return { ...adopted, fresh: found.fresh, listed: found.created };
  }

  /** Adopts a key a lost create made, with the token its lost answer carried. */
  async #adoptKey(change: Change, item: DesiredApikey, id: number, note: string): Promise<{ item: Item; note: string }> {
    // The create's answer carried the token and was lost: hand over the listed one, so a sync
    // that succeeds leaves the new key's token in the sink, as for any create.
    const token = this.#deps.refresher.token(id);
    if (token && this.#deps.onToken) await this.#deps.onToken(change.key, token);
    return { item: { ...item, id }, note };
  }

  async #replanAndWrite(change: Change, item: Item, fresh: ActualState, listed: readonly { id: number }[], passwords: PasswordPolicy, note: string): Promise<Outcome> {
    const { desired, policy, fingerprints } = this.#deps;
    const { change: next, problem, protected: guarded } = replanItem(change.kind, item, desired, fresh, policy, passwords, fingerprints ?? noFingerprints);
    if (problem) return { status: 'failed', id: change.id, error: problem.message, drift: note };
    if (guarded) return { status: 'skipped', id: listed[0]?.id ?? change.id, error: 'the item found is covered by a protect glob; left alone', drift: note };
    if (!next) return { status: 'applied', id: listed[0]?.id ?? change.id, drift: `${note}; already as declared` };
    const outcome = await this.#deps.writer.write(next, item);
    if (next.action === 'create' && change.action === 'update') note = `${note}; created it again as id ${outcome.id ?? '(pending)'}`;
    return { status: 'applied', id: outcome.id ?? next.id, drift: note };
  }
}

/** A wait as the messages say it: `2.3 s`. */
function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/**
 * What drift was met, and what was done about it. `settled` false: the re-read that would have
 * resolved it failed or was never sent (an interrupt), and the note must not claim it was done.
 */
export function driftNote(change: Change, code: string, settled = true): string {
  if (change.action === 'create' && code === 'conflict') return settled ? 'existed already (409); re-read' : 'existed already (409); re-reading it failed';
  if (change.action === 'create') return settled ? "the create's response was lost; looked it up" : "the create's response was lost; it could not be looked up, so whether it was created is not known";
  const what = code === 'not_found' ? 'was deleted outside amsync (404)' : 'changed outside amsync (409)';
  if (!settled) return `${what}; re-reading it failed`;
  return code === 'not_found' ? `${what}; re-planned` : `${what}; re-read and re-planned`;
}
