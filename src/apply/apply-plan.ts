import type { ActualState, Change, ChangeResult, DesiredApikey, DesiredSshUser, DesiredState, Plan, SecretValue } from '../model/index.js';
import { noFingerprints, type PasswordFingerprints, type PlanPolicy } from '../plan/index.js';
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
}

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
  const results = new Map<number, ChangeResult>();
  const order = schedule(plan.changes, options.actual);

  const finish = (i: number, result: ChangeResult) => {
    results.set(i, result);
    options.onResult?.(result);
  };

  const runWave = async (wave: readonly number[]) => {
    await Promise.all(
      wave.map(async (i) => {
        const change = plan.changes[i]!;
        const dep = order.dependsOn.get(i);
        const depResult = dep === undefined ? undefined : results.get(dep);
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

  const write = async (change: Change, item: DesiredSshUser | DesiredApikey | undefined): Promise<WriteOutcome> => {
    const w = options.writer;
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
    if (outcome.token && options.onToken) await options.onToken(body.name ?? change.key, outcome.token);
    return outcome;
  };

  for (const wave of order.before) await runWave(wave);
  await runWave(order.deletes);
  for (const wave of order.after) await runWave(wave);
  return plan.changes.map((_, i) => results.get(i)!);
}

function driftNote(change: Change, code: string): string {
  if (change.action === 'create' && code === 'conflict') return 'existed already (409); re-read';
  if (change.action === 'create') return "the create's response was lost; looked it up";
  if (code === 'not_found') return 'was deleted outside amsync (404); re-planned';
  return 'changed outside amsync (409); re-read and re-planned';
}
