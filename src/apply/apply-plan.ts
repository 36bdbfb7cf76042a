import type { ActualState, Change, ChangeResult, DesiredApikey, DesiredSshUser, DesiredState, Plan, SecretValue } from '../model/index.js';
import { noFingerprints, type PasswordFingerprints, type PlanPolicy } from '../plan/index.js';
import PQueue from 'p-queue';
import { errorCode, errorSummary } from './error-summary.js';
import { Refresher } from './refresher.js';
import { replanItem } from './replan-item.js';
import { apikeyBody, sshUserBody } from './request-body.js';
import { schedule } from './schedule.js';
import type { PasswordRecorder, ServiceWriter, WriteOutcome } from './service-writer.js';

export interface ApplyOptions {
  readonly writer: ServiceWriter;
  readonly desired: DesiredState;
  /** The listing the plan was computed from. */
  readonly actual: ActualState;
  readonly policy: PlanPolicy;
  readonly passwords?: PasswordRecorder;
  /** Receives each created apikey's token (the token sink). */
  readonly onToken?: (name: string, token: SecretValue) => Promise<void>;
  /** The fingerprints the plan was made with; drift re-plans use them too. */
  readonly fingerprints?: PasswordFingerprints;
  /** Called as each result is known (logs, metrics). */
  readonly onResult?: (result: ChangeResult) => void;
  /**
   * Aborted on an interrupt, a lost lease or a run deadline: no write starts after it fires;
   * writes in flight finish, and every change not started is reported as skipped.
   */
  readonly signal?: AbortSignal;
  /**
   * Changes being written at once. Set it to the client's concurrency (or a little above, to
   * keep the client busy): more would only wait in the client's queue, past the signal.
   */
  readonly maxInFlight?: number;
}

const defaultMaxInFlight = 16;

/**
 * Runs a plan: creates and updates first, deletes last, in dependency waves (see schedule).
 * One item's failure does not stop the others, and every change gets a result. Drift met
 * on the way (409, 404, a lost create response) is handled once per item by re-reading the
 * kind and re-planning that item: bounded, never a loop.
 */
export async function applyPlan(plan: Plan, options: ApplyOptions): Promise<ChangeResult[]> {
  // Nothing to do: no lookup tables over the whole state (at 100k items, tens of MB for nothing).
  if (plan.changes.length === 0) return [];
  const users = new Map(options.desired.sshUsers.map((u) => [u.username, u]));
  // Apikey names are not unique: keys that share a name are told apart by their pinned id.
  const keysById = new Map(options.desired.apikeys.flatMap((k) => (k.id === undefined ? [] : [[k.id, k] as const])));
  const keys = new Map(options.desired.apikeys.filter((k) => k.id === undefined).map((k) => [k.name, k]));
  const originalIds = {
    sshUser: new Set(options.actual.sshUsers.map((u) => u.id)),
    apikey: new Set(options.actual.apikeys.map((k) => k.id)),
  };
  const refresher = new Refresher(options.writer, options.actual);
  // Ids this run wrote, created or adopted: never deleted by the same run (verified deletes).
  const touched = { sshUser: new Set<number>(), apikey: new Set<number>() };
  const touch = (kind: Change['kind'], id: number | null | undefined) => {
    if (id !== null && id !== undefined) touched[kind].add(id);
  };
  const results = new Map<number, ChangeResult>();
  const order = schedule(plan.changes, options.actual);

  const finish = (i: number, result: ChangeResult) => {
    results.set(i, result);
    options.onResult?.(result);
  };

  // Changes are handed to the client as it can take them, not all at once: a change still
  // waiting here when the signal fires is never started (a queued request would be).
  const queue = new PQueue({ concurrency: options.maxInFlight ?? defaultMaxInFlight });
  const runWave = async (wave: readonly number[]) => {
    await queue.addAll(
      wave.map((i) => async () => {
        const change = plan.changes[i]!;
        const dep = order.dependsOn.get(i);
        const depResult = dep === undefined ? undefined : results.get(dep);
        if (options.signal?.aborted) {
          finish(i, { kind: change.kind, key: change.key, action: change.action, status: 'skipped', id: change.id, error: `not started: ${abortReason(options.signal)}` });
          return;
        }
        if (depResult && depResult.status !== 'applied') {
          const d = plan.changes[dep!]!;
          finish(i, { kind: change.kind, key: change.key, action: change.action, status: 'skipped', id: change.id, error: `waits for the ${d.action} of ${d.kind} "${d.key}", which did not apply` });
          return;
        }
        finish(i, await applyOne(change));
      }),
    );
  };

  const applyOne = async (change: Change): Promise<ChangeResult> => {
    const base = { kind: change.kind, key: change.key, action: change.action } as const;
    const item = change.kind === 'sshUser' ? users.get(change.key) : ((change.id === null ? undefined : keysById.get(change.id)) ?? keys.get(change.key));
    if (change.action === 'delete') {
      try {
        const refusal = await verifyDelete(change);
        if (refusal === 'gone') return { ...base, status: 'applied', id: change.id, drift: 'was already deleted' };
        if (refusal) return { ...base, status: 'skipped', id: change.id, error: 'not deleted: the item changed since the listing', drift: refusal };
      } catch (error) {
        return { ...base, status: 'failed', id: change.id, error: `not deleted: re-reading it failed: ${errorSummary(error)}` };
      }
    }
    try {
      const outcome = await write(change, item);
      return { ...base, status: 'applied', id: outcome.id ?? change.id };
    } catch (error) {
      const code = errorCode(error);
      if (change.action === 'delete' && code === 'not_found') {
        if (change.kind === 'sshUser') options.passwords?.forget(change.id!);
        return { ...base, status: 'applied', id: change.id, drift: 'was already deleted' };
      }
      const drifted =
        item !== undefined &&
        ((change.action === 'create' && (code === 'conflict' || code === 'unknown_outcome')) || (change.action === 'update' && (code === 'conflict' || code === 'not_found')));
      if (!drifted) return { ...base, status: 'failed', id: change.id, error: errorSummary(error) };
      const failedAt = refresher.mark();
      try {
        return { ...base, ...(await resolveDrift(change, item, code!, failedAt)) };
      } catch (second) {
        return { ...base, status: 'failed', id: change.id, error: errorSummary(second), drift: driftNote(change, code!) };
      }
    }
  };

  /** One re-read, one re-plan, at most one more write. */
  const resolveDrift = async (change: Change, item: DesiredSshUser | DesiredApikey, code: string, failedAt: number): Promise<Omit<ChangeResult, 'kind' | 'key' | 'action'>> => {
    const fresh = await refresher.refresh(change.kind, failedAt);
    const listed: readonly { id: number }[] = change.kind === 'sshUser' ? fresh.sshUsers.filter((u) => u.username === change.key) : fresh.apikeys.filter((k) => k.name === change.key);
    // Whatever now carries the declared name is this item's, whatever happens next.
    for (const x of listed) touch(change.kind, x.id);
    let note = driftNote(change, code);
    let passwords = options.policy.passwords;
    if (change.action === 'create') {
      // Adopting an item we did not create: its password is unknown, so set the declared one.
      passwords = { mode: 'rotate' };
      if (code === 'unknown_outcome') {
        const created = change.kind === 'sshUser' ? listed : listed.filter((x) => !originalIds.apikey.has(x.id));
        if (created.length === 0) {
          if (change.kind === 'apikey') {
            // Apikey names are not unique: a POST the service is still processing could land
            // after this listing, and a second POST would make a duplicate. Leave it to the
            // next run, which adopts the key if it landed and creates it if it did not.
            return { status: 'failed', id: null, error: "the create's response was lost and the key is not listed; not sent again, so it cannot be duplicated: the next run adopts or creates it", drift: note };
          }
          // Usernames are unique: a second POST is answered 409 if the first one landed.
          const outcome = await write(change, item);
          return { status: 'applied', id: outcome.id ?? null, drift: "the create's response was lost and no such user was found; created it again" };
        }
        if (created.length > 1) {
          return { status: 'failed', id: null, error: `the create's response was lost and ${created.length} items named "${change.key}" now exist (ids ${created.map((x) => x.id).join(', ')}); pin one with \`id:\``, drift: note };
        }
        note = `the create's response was lost; found it as id ${created[0]!.id} and adopted it`;
        if (change.kind === 'apikey') {
          item = { ...(item as DesiredApikey), id: created[0]!.id };
          // The create's answer carried the token and was lost: hand over the listed one, so a
          // sync that succeeds leaves the new key's token in the sink, as for any create.
          const token = refresher.token(created[0]!.id);
          if (token && options.onToken) await options.onToken(change.key, token);
        }
      } else if (listed[0]) {
        note = `existed already as id ${listed[0].id} (created outside amsync); adopted it`;
      }
    }
    const { change: next, problem, protected: guarded } = replanItem(change.kind, item, options.desired, fresh, options.policy, passwords, options.fingerprints ?? noFingerprints);
    if (problem) return { status: 'failed', id: change.id, error: problem.message, drift: note };
    if (guarded) return { status: 'skipped', id: listed[0]?.id ?? change.id, error: 'the item found is covered by a protect glob; left alone', drift: note };
    if (!next) {
      const id = listed[0]?.id ?? change.id;
      return { status: 'applied', id, drift: `${note}; already as declared` };
    }
    const outcome = await write(next, item);
    if (next.action === 'create' && change.action === 'update') note = `${note}; created it again as id ${outcome.id ?? '(pending)'}`;
    return { status: 'applied', id: outcome.id ?? next.id, drift: note };
  };

  /**
   * A delete is sent only for an item that is still what the plan meant to delete: re-read
   * by id (one GET per delete; deletes are few, bounded by the deletion budget). Returns why
   * not, 'gone' when it no longer exists, or undefined to go ahead.
   */
  const verifyDelete = async (change: Change): Promise<string | 'gone' | undefined> => {
    const id = change.id!;
    if (touched[change.kind].has(id)) return `id ${id} was adopted or written by this run; not deleted`;
    const current = change.kind === 'sshUser' ? await options.writer.fetchSshUser(id) : await options.writer.fetchApikey(id);
    if (current === undefined) return 'gone';
    const name = 'username' in current ? current.username : current.name;
    // The name is what the plan saw: a rename since the listing (into a declared name or any
    // other) means this is no longer the item the plan chose to delete.
    if (name !== change.key) return `now named "${name}" (renamed outside amsync since the listing); not deleted`;
    // Checked again: a create or drift re-read of this run may have claimed it meanwhile.
    return touched[change.kind].has(id) ? `id ${id} was adopted or written by this run; not deleted` : undefined;
  };

  const write = async (change: Change, item: DesiredSshUser | DesiredApikey | undefined): Promise<WriteOutcome> => {
    const w = options.writer;
    if (change.action !== 'delete') touch(change.kind, change.id);
    if (change.kind === 'sshUser') {
      const user = item as DesiredSshUser | undefined;
      if (change.action === 'delete') {
        await w.deleteSshUser(change.id!);
        options.passwords?.forget(change.id!);
        return { accepted: false, id: change.id! };
      }
      const body = sshUserBody(change, user);
      const outcome =
        change.action === 'create'
          ? await w.createSshUser({ username: change.key, level: body.level!, password: body.password! })
          : await w.updateSshUser(change.id!, body);
      const id = outcome.id ?? change.id;
      touch('sshUser', id);
      if (body.password && id !== null && id !== undefined) options.passwords?.record(id, body.password);
      return outcome;
    }
    if (change.action === 'delete') {
      await w.deleteApikey(change.id!);
      return { accepted: false, id: change.id! };
    }
    const body = apikeyBody(change);
    const outcome =
      change.action === 'create'
        ? await w.createApikey({ name: change.key, superuser: body.superuser ?? false, roles: body.roles ?? [] })
        : await w.updateApikey(change.id!, body);
    touch('apikey', outcome.id);
    if (outcome.token && options.onToken) await options.onToken(body.name ?? change.key, outcome.token);
    return outcome;
  };

  for (const wave of order.before) await runWave(wave);
  await runWave(order.deletes);
  for (const wave of order.after) await runWave(wave);
  return plan.changes.map((_, i) => results.get(i)!);
}

function abortReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason.message : typeof reason === 'string' ? reason : 'the run was stopped';
}

function driftNote(change: Change, code: string): string {
  if (change.action === 'create' && code === 'conflict') return 'existed already (409); re-read';
  if (change.action === 'create') return "the create's response was lost; looked it up";
  if (code === 'not_found') return 'was deleted outside amsync (404); re-planned';
  return 'changed outside amsync (409); re-read and re-planned';
}
