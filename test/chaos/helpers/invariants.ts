import type { ApikeyView, EmulatorStateSnapshot, RequestLogEntry, SeedResult } from '../../../src/emulator/index.js';
import { forms } from '../../helpers/encodings.js';
import { corruptingLabels, type ChaosSchedule, type Rename } from './schedule.js';

/**
 * The reliability invariants of DESIGN.md §8, checked the way Jepsen checks a history: from
 * the emulator's request log and its state, never from what amsync says about itself. Pure:
 * every function takes what was recorded and returns the violations it finds (empty: holds).
 */

export const LIST_ROUTES = { sshUser: '/api/sshusers', apikey: '/api/3rdparty/apikeys' } as const;

/** The token endpoint: a POST that exchanges an integrator key, not a write to the service's items. */
export const TOKEN_ROUTE = '/api/v1/oauth2/token';

const isWrite = (e: RequestLogEntry): boolean => (e.method === 'POST' || e.method === 'PUT' || e.method === 'DELETE') && e.path !== TOKEN_ROUTE;

/** `sshUser:7` / `apikey:3` for an item path, or null for any other path. */
export function itemOf(path: string): string | null {
  const m = /^\/api\/(sshusers|3rdparty\/apikeys)\/(\d+)$/.exec(path);
  if (m === null) return null;
  return `${m[1] === 'sshusers' ? 'sshUser' : 'apikey'}:${Number(m[2])}`;
}

export function writesOf(requests: readonly RequestLogEntry[]): RequestLogEntry[] {
  return requests.filter(isWrite);
}

/** Nothing deleted outside the plan's delete set: every DELETE sent names an item of the set. */
export function deletesOutsidePlan(requests: readonly RequestLogEntry[], deleteSet: ReadonlySet<string>): string[] {
  return requests
    .filter((e) => e.method === 'DELETE')
    .filter((e) => {
      const item = itemOf(e.path);
      return item === null || !deleteSet.has(item);
    })
    .map((e) => `DELETE ${e.path} (seq ${e.seq}, status ${e.status}) is not in the plan's delete set {${[...deleteSet].join(', ')}}`);
}

/**
 * Never a declared item: no DELETE removed an item that, when it was deleted, carried a name
 * the file declares present (or a pinned id). The request log names what each DELETE removed,
 * so an item renamed by another client after the listing is judged by its name at the time.
 */
export function deletesOfDeclared(requests: readonly RequestLogEntry[], schedule: ChaosSchedule, seeded: SeedResult): string[] {
  const users = new Set(schedule.users.filter((u) => u.ensure === 'present').map((u) => u.username));
  const keys = new Set(schedule.keys.filter((k) => k.ensure === 'present' && k.pinsInitial === undefined).map((k) => k.name));
  const pinned = new Set(schedule.keys.flatMap((k) => (k.pinsInitial === undefined ? [] : [seeded.apikeys[k.pinsInitial]!.id])));
  return requests
    .filter((e) => e.method === 'DELETE' && e.item !== undefined)
    .filter((e) => {
      const kind = itemOf(e.path)?.split(':')[0];
      return kind === 'sshUser' ? users.has(e.item!.name) : keys.has(e.item!.name) || pinned.has(e.item!.id);
    })
    .map((e) => `DELETE ${e.path} (seq ${e.seq}) deleted "${e.item!.name}", which the file declares`);
}

/** Whether the client received this list answer intact. */
export function delivered(e: RequestLogEntry, timeoutMs: number): boolean {
  if (e.status !== 200 || e.undelivered === true) return false;
  if (e.fault !== undefined && corruptingLabels.has(e.fault)) return false;
  // An answer slower than the client's timeout reached a client that had given up, whichever
  // fault the log names for it (a slow answer in a schedule with an interrupt is labelled by
  // the interrupt: seed 3004 blamed amsync for a password whose confirmation it never got).
  if (e.durationMs >= timeoutMs - sendLagMs) return false;
  return true;
}

/**
 * The client's timeout runs from its send, the log's duration from the emulator's receipt: on a
 * loaded machine the request reaches the emulator this much later (seed 3044, two suites on two
 * cores: answered in 303 ms of a 317 ms timeout, the client had given up at 464 ms). An answer
 * inside this margin of the timeout may or may not have reached a client still waiting, so the
 * invariants that need a delivered answer do not count it either way.
 */
const sendLagMs = 100;

/**
 * Whether the log holds one complete listing of a route: answers delivered intact whose
 * cursors chain from `0` to a page whose `next` is null, without visiting a cursor twice.
 */
export function listingComplete(entries: readonly RequestLogEntry[], route: string, timeoutMs: number): boolean {
  const byCursor = new Map<string, Set<string>>();
  for (const e of entries) {
    if (e.method !== 'GET' || e.path !== route || e.next === undefined || !delivered(e, timeoutMs)) continue;
    const cursor = e.query.cursor ?? '0';
    const nexts = byCursor.get(cursor) ?? new Set<string>();
    nexts.add(e.next === null ? 'end' : String(e.next));
    byCursor.set(cursor, nexts);
  }
  // Depth-first over the (few) alternatives; a path never revisits a cursor.
  const reaches = (cursor: string, seen: ReadonlySet<string>): boolean => {
    for (const next of byCursor.get(cursor) ?? []) {
      if (next === 'end') return true;
      if (!seen.has(next) && reaches(next, new Set([...seen, next]))) return true;
    }
    return false;
  };
  return reaches('0', new Set(['0']));
}

/**
 * Zero writes (so zero deletes) after an incomplete listing: the first write of a run comes
 * after a complete listing of both kinds. A run whose listing never completed writes nothing.
 */
export function writesAfterIncompleteListing(run: { readonly name: string; readonly requests: readonly RequestLogEntry[] }, timeoutMs: number): string[] {
  const writes = writesOf(run.requests);
  if (writes.length === 0) return [];
  const first = Math.min(...writes.map((w) => w.seq));
  const before = run.requests.filter((e) => e.seq < first);
  const problems: string[] = [];
  for (const [kind, route] of Object.entries(LIST_ROUTES)) {
    if (!listingComplete(before, route, timeoutMs)) {
      const deletes = writes.filter((w) => w.method === 'DELETE').length;
      problems.push(`${run.name}: ${writes.length} writes (${deletes} deletes) from seq ${first} without a complete ${kind} listing before them`);
    }
  }
  return problems;
}

/** No duplicate apikey: two remote keys with one declared name. */
export function duplicateApikeys(state: EmulatorStateSnapshot, schedule: ChaosSchedule): string[] {
  const counts = new Map<string, number>();
  for (const k of state.apikeys) counts.set(k.name, (counts.get(k.name) ?? 0) + 1);
  return schedule.keys
    .filter((k) => (counts.get(k.name) ?? 0) > 1)
    .map((k) => `${counts.get(k.name)} apikeys are named "${k.name}" (ids ${state.apikeys.filter((x) => x.name === k.name).map((x) => x.id).join(', ')})`);
}

const isProtected = (schedule: ChaosSchedule, kind: 'sshUsers' | 'apikeys', name: string): boolean =>
  schedule.protect[kind].includes('keep-*') && name.startsWith('keep-');

/**
 * The delete set the desired file and the initial state call for: declared `absent`, or
 * undeclared and pruned (never protected). Keys as `sshUser:ID` / `apikey:ID`.
 */
export function expectedDeletes(schedule: ChaosSchedule, seeded: SeedResult): Set<string> {
  const out = new Set<string>();
  const declaredUsers = new Map(schedule.users.map((u) => [u.username, u]));
  for (const u of seeded.sshUsers) {
    const d = declaredUsers.get(u.username);
    if (d?.ensure === 'absent' || (d === undefined && schedule.prune.sshUsers && !isProtected(schedule, 'sshUsers', u.username))) out.add(`sshUser:${u.id}`);
  }
  const pinned = new Set(schedule.keys.flatMap((k) => (k.pinsInitial === undefined ? [] : [seeded.apikeys[k.pinsInitial]!.id])));
  const byName = new Map(schedule.keys.filter((k) => k.pinsInitial === undefined).map((k) => [k.name, k]));
  for (const k of seeded.apikeys) {
    if (pinned.has(k.id)) continue;
    const d = byName.get(k.name);
    if (d?.ensure === 'absent' || (d === undefined && schedule.prune.apikeys && !isProtected(schedule, 'apikeys', k.name))) out.add(`apikey:${k.id}`);
  }
  return out;
}

/** The password "another client" sets when the drift fault creates a user (src/emulator/api-handler.ts). */
export const ANOTHER_CLIENTS_PASSWORD = 'set-by-another-client';

/** What the state file says: the fingerprint of the password last applied, by SSH user id. */
export interface TrackedPasswords {
  readonly applied: ReadonlyMap<string, string>;
  fingerprint(password: string): string;
}

/**
 * The passwords a declared SSH user may have once converged. Tracked (the state file holds a
 * fingerprint for its id): exactly the declared one, and the fingerprint is the declared
 * one's. Untracked: the password is write-only and unknown to amsync, so it is left alone:
 * the one it had, one another client set, or the declared one (amsync created the user).
 */
export async function passwordProblems(
  schedule: ChaosSchedule,
  seeded: SeedResult,
  state: EmulatorStateSnapshot,
  tracked: TrackedPasswords,
  checkPassword: (username: string, password: string) => Promise<boolean>,
): Promise<string[]> {
  const initial = new Map(schedule.initial.sshUsers.map((u) => [u.username, u]));
  const seededIds = new Map(seeded.sshUsers.map((u) => [u.username, u.id]));
  const problems: string[] = [];
  for (const u of schedule.users) {
    const remote = state.sshUsers.find((r) => r.username === u.username);
    if (u.ensure !== 'present' || !remote) continue;
    const fp = tracked.applied.get(String(remote.id));
    if (fp !== undefined) {
      if (!u.password) continue;
      if (fp !== tracked.fingerprint(u.password.value)) problems.push(`SSH user "${u.username}" is tracked with the fingerprint of another password than the declared one`);
      else if (!(await checkPassword(u.username, u.password.value))) problems.push(`the state file says SSH user "${u.username}" has the declared password, but it does not`);
      continue;
    }
    const allowed = [ANOTHER_CLIENTS_PASSWORD];
    if (u.password) allowed.push(u.password.value);
    const before = initial.get(u.username);
    if (before && seededIds.get(u.username) === remote.id) allowed.push(seedPassword(u, before.password));
    let ok = false;
    for (const p of allowed) if (!ok && (await checkPassword(u.username, p))) ok = true;
    if (!ok) problems.push(`untracked SSH user "${u.username}" has a password amsync had no reason to set`);
  }
  return problems;
}

/** The password an initial user is seeded with: the one the state file says was applied, if any. */
export function seedPassword(declared: { readonly applied?: string } | undefined, initialPassword: string): string {
  return declared?.applied ?? initialPassword;
}

/**
 * How the service differs from the desired file, given the initial state: the empty list
 * when it has converged. `checkPassword` asks the emulator (write-only passwords).
 */
export async function divergence(
  schedule: ChaosSchedule,
  seeded: SeedResult,
  state: EmulatorStateSnapshot,
  tracked: TrackedPasswords,
  checkPassword: (username: string, password: string) => Promise<boolean>,
): Promise<string[]> {
  const problems: string[] = await passwordProblems(schedule, seeded, state, tracked, checkPassword);
  const users = new Map(state.sshUsers.map((u) => [u.username, u]));
  const deletes = expectedDeletes(schedule, seeded);
  const declaredUsers = new Map(schedule.users.map((u) => [u.username, u]));
  for (const u of schedule.users) {
    const remote = users.get(u.username);
    if (u.ensure === 'absent' && remote) problems.push(`SSH user "${u.username}" is declared absent but exists (id ${remote.id})`);
    if (u.ensure === 'present' && !remote) problems.push(`SSH user "${u.username}" is declared but missing`);
    if (u.ensure === 'present' && remote && remote.level !== 'n1') problems.push(`SSH user "${u.username}" has level ${remote.level}`);
  }
  for (const u of seeded.sshUsers) {
    if (declaredUsers.has(u.username)) continue;
    const gone = !state.sshUsers.some((s) => s.id === u.id);
    if (deletes.has(`sshUser:${u.id}`) && !gone) problems.push(`undeclared SSH user "${u.username}" (id ${u.id}) should be pruned`);
    if (!deletes.has(`sshUser:${u.id}`) && gone) problems.push(`SSH user "${u.username}" (id ${u.id}) was deleted, yet not planned for deletion`);
  }

  const keysById = new Map(state.apikeys.map((k) => [k.id, k]));
  const sameRoles = (k: ApikeyView, roles: readonly number[]) => k.roles.map((r) => r.id).sort().join() === [...roles].sort().join();
  for (const d of schedule.keys) {
    const named = state.apikeys.filter((k) => k.name === d.name);
    if (d.ensure === 'absent') {
      if (named.length > 0) problems.push(`apikey "${d.name}" is declared absent but exists`);
      continue;
    }
    const remote = d.pinsInitial === undefined ? named[0] : keysById.get(seeded.apikeys[d.pinsInitial]!.id);
    if (!remote) problems.push(`apikey "${d.name}" is declared but missing`);
    else if (remote.name !== d.name || remote.superuser !== d.superuser || !sameRoles(remote, d.roles)) {
      problems.push(`apikey "${d.name}" is ${JSON.stringify({ name: remote.name, superuser: remote.superuser, roles: remote.roles.map((r) => r.id) })}, not as declared`);
    }
  }
  const declaredKeyNames = new Set(schedule.keys.filter((k) => k.pinsInitial === undefined).map((k) => k.name));
  const pinnedIds = new Set(schedule.keys.flatMap((k) => (k.pinsInitial === undefined ? [] : [seeded.apikeys[k.pinsInitial]!.id])));
  for (const k of seeded.apikeys) {
    if (declaredKeyNames.has(k.name) || pinnedIds.has(k.id)) continue;
    const gone = !keysById.has(k.id);
    if (deletes.has(`apikey:${k.id}`) && !gone) problems.push(`undeclared apikey "${k.name}" (id ${k.id}) should be pruned`);
    if (!deletes.has(`apikey:${k.id}`) && gone) problems.push(`apikey "${k.name}" (id ${k.id}) was deleted, yet not planned for deletion`);
  }
  return [...problems, ...duplicateApikeys(state, schedule)];
}

/**
 * Canary secrets absent from everything amsync printed or wrote (tokens dir excepted), in every
 * form a server echoes them in: raw, JSON-escaped (also as \uXXXX, twice over), URL-encoded
 * (also form-encoded, twice over) and HTML-escaped (test/helpers/encodings.ts).
 */
export function canariesFound(outputs: readonly { readonly where: string; readonly text: string }[], canaries: readonly string[]): string[] {
  const problems: string[] = [];
  const encoded = canaries.filter((c) => c !== '').map((canary) => ({ canary, forms: forms([canary]) }));
  for (const { where, text } of outputs) {
    for (const { canary, forms: all } of encoded) {
      const form = all.find((f) => text.includes(f));
      if (form !== undefined) problems.push(`a secret (${canary.slice(0, 12)}…) appears in ${where}${form === canary ? '' : ' (encoded)'}`);
    }
  }
  return problems;
}

/**
 * The schedule and the seeded state as the service has them once another client's renames
 * (whose rules fired) are made: the item counts as seeded under its new name, with the
 * password it was seeded with. Divergence and the delete set are judged against this.
 */
export function withRenames(schedule: ChaosSchedule, seeded: SeedResult, renames: readonly Rename[]): { schedule: ChaosSchedule; seeded: SeedResult } {
  if (renames.length === 0) return { schedule, seeded };
  const declared = new Map(schedule.users.map((u) => [u.username, u]));
  const initialUsers = schedule.initial.sshUsers.map((u, i) => {
    const r = renames.find((x) => x.kind === 'sshUsers' && x.index === i);
    return r ? { username: r.to, password: seedPassword(declared.get(u.username), u.password) } : u;
  });
  const initialKeys = schedule.initial.apikeys.map((k, i) => {
    const r = renames.find((x) => x.kind === 'apikeys' && x.index === i);
    return r ? { ...k, name: r.to } : k;
  });
  const renamedView = <T extends { id: number }>(items: readonly T[], kind: Rename['kind'], field: 'username' | 'name'): T[] =>
    items.map((item, i) => {
      const r = renames.find((x) => x.kind === kind && x.index === i);
      return r ? { ...item, [field]: r.to } : item;
    });
  return {
    schedule: { ...schedule, initial: { sshUsers: initialUsers, apikeys: initialKeys } },
    seeded: { sshUsers: renamedView(seeded.sshUsers, 'sshUsers', 'username'), apikeys: renamedView(seeded.apikeys, 'apikeys', 'name') },
  };
}

/**
 * Fingerprints are saved as writes succeed, and on the way out (Ctrl-C included): when a run
 * has ended, every SSH user whose password it wrote, and whose write the service confirmed to
 * it (a 200 that reached a listening client intact), is in the state file with the fingerprint
 * of the declared password. Passwords written are told by `passwordVersion`.
 */
export function fingerprintsLost(
  run: { readonly name: string; readonly requests: readonly RequestLogEntry[] },
  before: EmulatorStateSnapshot,
  after: EmulatorStateSnapshot,
  tracked: TrackedPasswords,
  schedule: ChaosSchedule,
  timeoutMs: number,
): string[] {
  const versionBefore = new Map(before.sshUsers.map((u) => [u.id, u.passwordVersion]));
  const declared = new Map(schedule.users.map((u) => [u.username, u]));
  const problems: string[] = [];
  const confirmed = run.requests.filter((e) => (e.method === 'POST' || e.method === 'PUT') && /^\/api\/sshusers(\/\d+)?$/.test(e.path) && e.item !== undefined && delivered(e, timeoutMs));
  for (const id of new Set(confirmed.map((e) => e.item!.id))) {
    const now = after.sshUsers.find((u) => u.id === id);
    if (!now || now.passwordVersion <= (versionBefore.get(id) ?? 0)) continue;
    const password = declared.get(now.username)?.password?.value;
    const fp = tracked.applied.get(String(id));
    if (fp === undefined) problems.push(`${run.name}: the password of SSH user "${now.username}" (id ${id}) was set and confirmed, but the state file has no fingerprint for it`);
    else if (password !== undefined && fp !== tracked.fingerprint(password)) problems.push(`${run.name}: SSH user "${now.username}" (id ${id}) is fingerprinted with another password than the declared one`);
  }
  return problems;
}

/** One per-item result of a `--report` file (the --json document's `results`). */
export interface ReportedResult {
  readonly kind: 'sshUser' | 'apikey';
  readonly key: string;
  readonly action: 'create' | 'update' | 'delete';
  readonly status: 'applied' | 'failed' | 'skipped';
  readonly id?: number | null;
  readonly error?: string;
  /** The item drifted during the apply and the change was re-planned ("adopted …", "was already deleted"). */
  readonly drift?: string;
}

/**
 * The report tells the truth: what it says was applied is so in the service once the run has
 * ended. A created or updated item exists under its declared name; a deleted one is gone.
 */
export function reportUntruths(results: readonly ReportedResult[], state: EmulatorStateSnapshot): string[] {
  const problems: string[] = [];
  for (const r of results) {
    if (r.status !== 'applied') continue;
    const named = r.kind === 'sshUser' ? state.sshUsers.filter((u) => u.username === r.key) : state.apikeys.filter((k) => k.name === r.key);
    const byId = r.kind === 'sshUser' ? state.sshUsers.some((u) => u.id === r.id) : state.apikeys.some((k) => k.id === r.id);
    if (r.action === 'delete' && r.id != null && byId) problems.push(`the report says ${r.kind} "${r.key}" (id ${r.id}) was deleted, yet it exists`);
    if (r.action !== 'delete' && named.length === 0) problems.push(`the report says ${r.kind} "${r.key}" was ${r.action}d, yet there is none`);
  }
  return problems;
}

/** Protected items (`keep-*` under a protect glob) are never changed or deleted. */
export function writesToProtected(requests: readonly RequestLogEntry[], schedule: ChaosSchedule, seeded: SeedResult): string[] {
  const protectedItems = new Set([
    ...seeded.sshUsers.filter((u) => isProtected(schedule, 'sshUsers', u.username)).map((u) => `sshUser:${u.id}`),
    ...seeded.apikeys.filter((k) => isProtected(schedule, 'apikeys', k.name)).map((k) => `apikey:${k.id}`),
  ]);
  return requests
    .filter((e) => (e.method === 'PUT' || e.method === 'DELETE') && protectedItems.has(itemOf(e.path) ?? ''))
    .map((e) => `${e.method} ${e.path} (seq ${e.seq}) touches a protected item`);
}

/** The plan's changes as a `--json` document or `--report` file gives them: with the ids of updates and deletes. */
export interface ReportedChange {
  readonly kind: 'sshUser' | 'apikey';
  readonly key: string;
  readonly action: 'create' | 'update' | 'delete';
  readonly id?: number | null;
}

/** What a run reported: the plan's changes and the per-change results (none before an apply). */
export interface RunReport {
  readonly changes: readonly ReportedChange[];
  readonly results: readonly ReportedResult[];
}

const collectionOf = (kind: ReportedChange['kind']): string => LIST_ROUTES[kind];
const itemPathOf = (kind: ReportedChange['kind'], id: number): string => `${LIST_ROUTES[kind]}/${id}`;
const kindOfPath = (path: string): ReportedChange['kind'] | undefined => (path.startsWith(LIST_ROUTES.apikey) ? 'apikey' : path.startsWith(LIST_ROUTES.sshUser) ? 'sshUser' : undefined);

/** The id of a change's item: the plan's for updates and deletes (a create has none before it is made). */
function idOf(report: RunReport, r: ReportedResult): number | undefined {
  const change = report.changes.find((c) => c.kind === r.kind && c.key === r.key && c.action === r.action);
  const id = r.id ?? change?.id;
  return typeof id === 'number' ? id : undefined;
}

/** The change a write the service performed belongs to: a create by the name it made, an update or delete by id. */
function changeOfWrite(report: RunReport, e: RequestLogEntry): ReportedChange | undefined {
  const kind = kindOfPath(e.path);
  if (kind === undefined) return undefined;
  if (e.method === 'POST') return report.changes.find((c) => c.kind === kind && c.action === 'create' && c.key === e.item?.name);
  const id = Number(/\/(\d+)$/.exec(e.path)?.[1]);
  const action = e.method === 'PUT' ? 'update' : 'delete';
  return report.changes.find((c) => c.kind === kind && c.action === action && c.id === id);
}

/**
 * Applied equals what the service received, change by change (issue 27). Each change the
 * report calls applied has its write in the request log of the process that reported it (a
 * create: a POST that made an item of its name; an update: a PUT of its id; deletes are
 * judged by `deletedWithoutEvidence`). A change re-planned on the way (`drift`: adopted,
 * already gone) is judged by the item it found, not here. And the other way: each write the
 * service performed and whose answer reached amsync intact is reported applied — not failed,
 * not "not started", not missing. A write whose answer was lost may be reported failed, and so
 * may one made on the service whose token could not be kept beside it (the error says so).
 */
export function appliedVersusReceived(name: string, report: RunReport, requests: readonly RequestLogEntry[], timeoutMs: number): string[] {
  const problems: string[] = [];
  const writes = writesOf(requests);
  for (const r of report.results) {
    if (r.status !== 'applied' || r.action === 'delete' || r.drift !== undefined) continue;
    const id = idOf(report, r);
    const found =
      r.action === 'create'
        ? writes.some((e) => e.method === 'POST' && e.path === collectionOf(r.kind) && e.item?.name === r.key)
        : id !== undefined && writes.some((e) => e.method === 'PUT' && e.path === itemPathOf(r.kind, id) && e.item !== undefined);
    if (!found) problems.push(`${name}: reports ${r.kind} "${r.key}" ${r.action}d, but the service received no ${r.action} of it`);
  }
  for (const e of writes) {
    if (e.item === undefined || e.status < 200 || e.status > 299 || !delivered(e, timeoutMs)) continue;
    const change = changeOfWrite(report, e);
    if (change === undefined) continue;
    const result = report.results.find((r) => r.kind === change.kind && r.key === change.key && r.action === change.action);
    // An answer amsync says it did not get (the service sent it, amsync gave up first: a
    // timeout, a lost lock on waking from a pause): the error says so. (A key whose token file
    // could not be written is applied: the service has it.)
    if (result?.status === 'failed' && /response was lost|answer was lost|timed out|timeout/i.test(`${result.error ?? ''} ${result.drift ?? ''}`)) continue;
    if (result?.status !== 'applied') {
      problems.push(`${name}: the service performed ${e.method} ${e.path} (seq ${e.seq}, ${e.status}) for ${change.kind} "${change.key}" and answered it, but the report says ${result === undefined ? 'nothing of it' : `"${result.status}"${result.error ? ` (${result.error.slice(0, 120)})` : ''}`}`);
    }
  }
  return problems;
}

/**
 * Never "deleted" without a DELETE or a confirmed absence (issue 27): each delete the report
 * calls applied has a DELETE of its id in the log (whatever its answer: a 404 to a DELETE is
 * an absence confirmed), or a read of the item that the service itself answered 404 (no fault
 * made it up). `window` is every request of the time the run ran (another process's DELETE
 * counts: the item is gone).
 */
export function deletedWithoutEvidence(name: string, report: RunReport, own: readonly RequestLogEntry[], window: readonly RequestLogEntry[], after: EmulatorStateSnapshot): string[] {
  const problems: string[] = [];
  for (const r of report.results) {
    if (r.status !== 'applied' || r.action !== 'delete') continue;
    const id = idOf(report, r);
    if (id === undefined) continue;
    const path = itemPathOf(r.kind, id);
    const deleted = window.some((e) => e.method === 'DELETE' && e.path === path);
    const confirmedAbsent = own.some((e) => e.method === 'GET' && e.path === path && e.status === 404 && e.fault === undefined);
    if (deleted || confirmedAbsent) continue;
    const exists = r.kind === 'sshUser' ? after.sshUsers.some((u) => u.id === id) : after.apikeys.some((k) => k.id === id);
    problems.push(`${name}: reports ${r.kind} "${r.key}" (id ${id}) deleted${r.drift ? ` (${r.drift})` : ''}, but sent no DELETE and no read confirmed it gone${exists ? '; it still exists' : ''}`);
  }
  return problems;
}

/**
 * No write starts after an interrupt (issue 27): once SIGINT reached the process, the writes
 * already on the wire may finish, nothing else may start — no queued write, no retry. Judged
 * by arrival at the service, `graceMs` after the signal was sent (what was sent before it
 * arrives within milliseconds on 127.0.0.1; the grace absorbs a busy test process).
 */
export function writesAfterInterrupt(name: string, requests: readonly RequestLogEntry[], signalledAt: number, graceMs: number): string[] {
  const late = writesOf(requests).filter((e) => Date.parse(e.time) > signalledAt + graceMs);
  if (late.length === 0) return [];
  const last = Math.max(...late.map((e) => Date.parse(e.time)));
  return [`${name}: ${late.length} writes reached the service more than ${graceMs} ms after SIGINT (the last ${((last - signalledAt) / 1000).toFixed(1)} s after it): ${late.slice(0, 5).map((e) => `${e.method} ${e.path} ${e.status}`).join(', ')}${late.length > 5 ? ', …' : ''}`];
}

/**
 * Never two writers (issue 27): processes sharing a state file write in turns. In the order
 * the service received them, the writes of labelled processes change hands at most once: one
 * writer's writes, then the other's — never back (a paused writer that wakes after another
 * took over, and writes on).
 */
export function interleavedWriters(requests: readonly RequestLogEntry[]): string[] {
  const writes = writesOf(requests)
    .filter((e) => e.client !== undefined)
    .sort((a, b) => a.seq - b.seq);
  const turns: { client: string; from: number; count: number }[] = [];
  for (const e of writes) {
    const last = turns.at(-1);
    if (last !== undefined && last.client === e.client) last.count += 1;
    else turns.push({ client: e.client!, from: e.seq, count: 1 });
  }
  if (turns.length <= 1 || new Set(turns.map((t) => t.client)).size === turns.length) return [];
  return [`writes changed hands ${turns.length - 1} times: ${turns.map((t) => `${t.client} ×${t.count} from seq ${t.from}`).join(', then ')}`];
}

/**
 * The requests of one process: all of them when it ran alone; when processes ran together
 * (two writers), those carrying the label of its token (the emulator's `client`). Seed 1063
 * broke "zero writes after an incomplete listing" when every request of two writers was put
 * on the first one: a writer refused by the lock (exit 3, no request) was blamed for the
 * endless listing the other one read.
 */
export function requestsOf(name: string, window: readonly RequestLogEntry[], together: boolean): RequestLogEntry[] {
  return together ? window.filter((e) => e.client === name) : [...window];
}

/** A process that read a listing that never ends (every read of it is endless) cannot complete it: it exits 1. */
export function endlessListingExit(run: { readonly name: string; readonly code: number | null; readonly requests: readonly RequestLogEntry[] }, endlessLabel: string): string[] {
  if (!run.requests.some((e) => e.fault === endlessLabel)) return [];
  return run.code === 1 ? [] : [`${run.name} read a listing that never ends and exited ${run.code}, not 1`];
}
