import type { ActualState, ChangeResult, DesiredApikey, DesiredState, Kind, PlanClock } from '../model/index.js';
import { declaredItems } from '../plan/index.js';
import { createdKey, type PasswordState } from '../secrets/index.js';

/**
 * What `ttl:` counts from (README, "The desired-state file"): the time amsync created the item, kept in the state
 * file. An item with a `ttl:` that exists and has no record (adopted, or created by a run that
 * died before it saved) counts from the first run that manages it: recorded now (not by a
 * dry-run, whose plan counts from now as well).
 */
export function expiryClock(desired: DesiredState, actual: ActualState, state: PasswordState | undefined, now: number, dryRun: boolean): PlanClock {
  const times = state?.createdAt;
  if (state === undefined || times === undefined) return { now };
  if (!dryRun) {
    for (const d of declaredItems(desired, actual)) {
      if ((d.item.ttl === undefined && !rotates(d.item)) || d.item.ensure !== 'present' || d.remoteId === undefined) continue;
      if (!times.has(createdKey(d.kind, d.remoteId))) state.recordCreated?.(d.kind, d.remoteId, now);
    }
  }
  // A rotation record one of whose ids the (complete) listing lacks is over: forgotten, so that
  // a key the service later gives that id (ids may be handed out again) is no one's successor
  // or predecessor. A dry-run leaves it in the file (the planner ignores a record of a key not
  // listed; the wake-up after a run is computed with dryRun over the listing before that run's creates).
  if (!dryRun && state.rotating !== undefined && state.rotating.size > 0) {
    const listed = new Set(actual.apikeys.map((k) => k.id));
    for (const [id, r] of [...state.rotating]) if (!listed.has(Number(id)) || !listed.has(r.successor)) state.recordRotating?.(Number(id), null);
  }
  // Apikeys in rotation (rotate: {every, overlap}): which ids form one key (plan/key-rotation.ts).
  const rotating = state.rotating === undefined || state.rotating.size === 0 ? {} : { rotating: new Map([...state.rotating].map(([id, r]) => [Number(id), r] as const)) };
  return { now, createdAt: (kind, id) => times.get(createdKey(kind, id)), ...rotating };
}

/** An apikey with `rotate:` counts its token's age from its create, as `ttl:` does. */
function rotates(item: object): boolean {
  return 'rotate' in item && (item as DesiredApikey).rotate !== undefined && !('username' in item);
}

/** Records the create time of each item with a `ttl:` this run created (before the state file's last save). */
export function recordTtlCreates(desired: DesiredState, state: PasswordState | undefined, clock: () => number): ((result: ChangeResult) => void) | undefined {
  if (state?.recordCreated === undefined) return undefined;
  const withTtl = new Set<string>();
  const mark = (kind: Kind, key: string) => withTtl.add(`${kind}\u0000${key}`);
  for (const u of desired.sshUsers) if (u.ttl !== undefined && u.ensure === 'present') mark('sshUser', u.username);
  for (const k of desired.apikeys) if ((k.ttl !== undefined || k.rotate !== undefined) && k.ensure === 'present') mark('apikey', k.name);
  if (withTtl.size === 0) return undefined;
  const rotating = new Set(desired.apikeys.filter((k) => k.rotate !== undefined && k.ensure === 'present').map((k) => k.name));
  return (r) => {
    if (r.action === 'create' && r.status === 'applied' && typeof r.id === 'number' && withTtl.has(`${r.kind}\u0000${r.key}`)) state.recordCreated?.(r.kind, r.id, clock());
    if (r.kind !== 'apikey' || r.status !== 'applied' || !rotating.has(r.key)) return;
    // A successor created: the two ids form one key until the predecessor's delete (key-rotation.ts).
    // Not when the sink lost its token: the predecessor stays the key in use (the next plan reports the twin).
    if (r.action === 'create' && r.replaces !== undefined && r.tokenLost !== true && typeof r.id === 'number') state.recordRotating?.(r.replaces, { successor: r.id, since: clock() });
    if (r.action === 'delete' && typeof r.id === 'number') state.recordRotating?.(r.id, null);
  };
}

/** The results hook of a run that writes, with the ttl create records first (they are saved with the fingerprints). */
export function withTtlCreates(desired: DesiredState, state: PasswordState | undefined, clock: () => number, onResult: ((r: ChangeResult) => void) | undefined): ((r: ChangeResult) => void) | undefined {
  const record = recordTtlCreates(desired, state, clock);
  if (record === undefined) return onResult;
  return (r) => {
    record(r);
    onResult?.(r);
  };
}

/** A declared item counts its expiry from its create (`ttl:`): its create time is in the state file. */
export function declaresTtl(desired: DesiredState): boolean {
  return [...desired.sshUsers, ...desired.apikeys].some((i) => (i.ttl !== undefined || rotates(i)) && i.ensure === 'present');
}
