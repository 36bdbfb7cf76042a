import type { ChangeResult, NotifyChange, NotifyEvent } from '../model/index.js';
import { GENERATED } from '../model/index.js';
import { expiredReason, keyRotationReason } from '../plan/index.js';
import type { SyncOutcome } from './run-sync.js';

/**
 * What a sync tells the webhooks (README, "Teams and governance"), the same for `amsync sync`, `apply` and the
 * daemon: drift found (a plan with changes that was not applied), changes applied, and a
 * failure (a refusal, or changes that did not apply). Names and counts only: never a value.
 */
export function syncEvents(sync: Pick<SyncOutcome, 'plan' | 'results' | 'refusal' | 'cancelled'>, options: { readonly dryRun: boolean; readonly target?: string | null }): NotifyEvent[] {
  const target = options.target ?? null;
  const changes = sync.plan.changes.map((c) => ({ kind: c.kind, action: c.action, key: c.key }));
  const planned = count(sync.plan.changes.map((c) => c.action));
  const events: NotifyEvent[] = [];
  if (sync.refusal) {
    events.push({ event: 'failure', target, summary: planned, changes, message: `refused: ${sync.refusal.message}` });
    return events;
  }
  const results = sync.results ?? [];
  if ((options.dryRun || sync.cancelled === true) && changes.length > 0) {
    events.push({ event: 'drift_found', target, summary: planned, changes, message: `${changes.length} change${changes.length === 1 ? '' : 's'} pending` });
  }
  // Observed items (mode: observe) drift on every run until someone acts: told each run, never applied.
  const observed = (sync.plan.observed ?? []).map((c) => ({ kind: c.kind, action: c.action, key: c.key }));
  if (observed.length > 0) {
    events.push({ event: 'drift_found', target, summary: { observed: observed.length }, changes: observed, message: `${observed.length} observed item${observed.length === 1 ? '' : 's'} drifted (observe only: not corrected)` });
  }
  const applied = results.filter((r) => r.status === 'applied');
  const failed = results.filter((r) => r.status !== 'applied');
  if (applied.length > 0) {
    events.push({ event: 'changes_applied', target, summary: { ...count(applied.map((r) => r.action)), failed: failed.length }, changes: applied, message: `${applied.length} change${applied.length === 1 ? '' : 's'} applied` });
  }
  // Expired items deleted (expires: / ttl:): told on their own, beside changes_applied.
  const expiredIds = new Set(sync.plan.changes.filter((c) => c.action === 'delete' && c.reason === expiredReason).map((c) => `${c.kind}\u0000${c.key}`));
  const expired = applied.filter((r) => r.action === 'delete' && expiredIds.has(`${r.kind}\u0000${r.key}`)).map((r) => ({ kind: r.kind, action: r.action, key: r.key }));
  if (expired.length > 0) {
    events.push({ event: 'access_expired', target, summary: { expired: expired.length }, changes: expired, message: `${expired.length} expired item${expired.length === 1 ? '' : 's'} deleted: ${expired.map((c) => `${c.kind} ${c.key}`).join(', ')}` });
  }
  const rotated = rotatedCredentials(sync.plan, applied);
  if (rotated.length > 0) {
    events.push({ event: 'credential_rotated', target, summary: { rotated: rotated.length }, changes: rotated, message: `${rotated.length} credential${rotated.length === 1 ? '' : 's'} rotated` });
  }
  if (failed.length > 0) {
    events.push({ event: 'failure', target, summary: { applied: applied.length, failed: failed.length }, changes: failed, message: `${failed.length} of ${results.length} changes did not apply` });
  }
  return events;
}

/**
 * The applied updates that set a new generated password (a rotation: scheduled, `--replace`,
 * `--rotate-passwords`, or a lost one set again). A create's first password is not a rotation.
 */
function rotatedCredentials(plan: SyncOutcome['plan'], applied: readonly ChangeResult[]): NotifyChange[] {
  const generating = new Set(plan.changes.filter((c) => c.kind === 'sshUser' && c.action === 'update' && c.fields.password?.after === GENERATED).map((c) => c.key));
  // An apikey's scheduled rotation (rotate: {every, overlap}): its successor created.
  const successors = new Set(plan.changes.filter((c) => c.kind === 'apikey' && c.action === 'create' && c.replaces !== undefined && c.reason?.startsWith(keyRotationReason) === true).map((c) => c.key));
  if (generating.size === 0 && successors.size === 0) return [];
  const rotated = (r: ChangeResult) => (r.kind === 'sshUser' && r.action === 'update' && generating.has(r.key)) || (r.kind === 'apikey' && r.action === 'create' && r.replaces !== undefined && successors.has(r.key));
  return applied.filter(rotated).map((r) => ({ kind: r.kind, action: r.action, key: r.key }));
}

function count(actions: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of actions) out[a] = (out[a] ?? 0) + 1;
  return out;
}
