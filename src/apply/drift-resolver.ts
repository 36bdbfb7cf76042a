import type { ActualState, Change, ChangeResult, DesiredApikey, DesiredSshUser, DesiredState, SecretValue } from '../model/index.js';
import { noFingerprints, type PasswordFingerprints, type PasswordPolicy, type PlanPolicy } from '../plan/index.js';
import type { ChangeWriter } from './change-writer.js';
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
  readonly onToken?: (name: string, token: SecretValue) => Promise<void>;
  readonly refresher: Refresher;
  readonly touched: TouchedIds;
  readonly writer: ChangeWriter;
}

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
    const fresh = await this.#deps.refresher.refresh(change.kind, failedAt);
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
      } else if (listed[0]) {
        note = `existed already as id ${listed[0].id} (created outside amsync); adopted it`;
      }
    }
    return this.#replanAndWrite(change, item, fresh, listed, passwords, note);
  }

  /** A create whose answer was lost: find what it made, or decide it made nothing. */
  async #findLostCreate(change: Change, item: Item, listed: readonly { id: number }[]): Promise<{ outcome: Outcome } | { item: Item; note: string }> {
    const note = driftNote(change, 'unknown_outcome');
    const created = change.kind === 'sshUser' ? listed : listed.filter((x) => !this.#originalKeyIds.has(x.id));
    if (created.length === 0) {
      if (change.kind === 'apikey') {
        // Apikey names are not unique: a POST the service is still processing could land
        // after this listing, and a second POST would make a duplicate. Leave it to the
        // next run, which adopts the key if it landed and creates it if it did not.
        return { outcome: { status: 'failed', id: null, error: "the create's response was lost and the key is not listed; not sent again, so it cannot be duplicated: the next run adopts or creates it", drift: note } };
      }
      // Usernames are unique: a second POST is answered 409 if the first one landed.
      const outcome = await this.#deps.writer.write(change, item);
      return { outcome: { status: 'applied', id: outcome.id ?? null, drift: "the create's response was lost and no such user was found; created it again" } };
    }
    if (created.length > 1) {
      return { outcome: { status: 'failed', id: null, error: `the create's response was lost and ${created.length} items named "${change.key}" now exist (ids ${created.map((x) => x.id).join(', ')}); pin one with \`id:\``, drift: note } };
    }
    const id = created[0]!.id;
    if (change.kind === 'sshUser') return { item, note: `the create's response was lost; found it as id ${id} and adopted it` };
    // The create's answer carried the token and was lost: hand over the listed one, so a sync
    // that succeeds leaves the new key's token in the sink, as for any create.
    const token = this.#deps.refresher.token(id);
    if (token && this.#deps.onToken) await this.#deps.onToken(change.key, token);
    return { item: { ...(item as DesiredApikey), id }, note: `the create's response was lost; found it as id ${id} and adopted it` };
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

export function driftNote(change: Change, code: string): string {
  if (change.action === 'create' && code === 'conflict') return 'existed already (409); re-read';
  if (change.action === 'create') return "the create's response was lost; looked it up";
  if (code === 'not_found') return 'was deleted outside amsync (404); re-planned';
  return 'changed outside amsync (409); re-read and re-planned';
}
