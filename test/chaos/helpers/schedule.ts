import type { FaultRule } from '../../../src/emulator/index.js';
import { createRng, type Rng } from '../../../src/emulator/rng.js';

/**
 * Seeded fault schedules for the chaos tests: one seed gives one scenario (the service's
 * state before, the desired file, the settings, and the faults of the run), so a failing
 * schedule is replayed with `CHAOS_SEED=<seed> npm run chaos`. Pure: no I/O, no clock.
 */

/** The faults a schedule can inject, one family each (DESIGN.md §6, issue 9). */
export const faultFamilies = [
  'server-errors', // 500/502/503/504 at 10–30 %
  'storm-503', // a 503 storm, Retry-After in seconds or as an HTTP-date
  'maintenance', // a maintenance window of a few seconds
  'resets', // connections reset before the answer
  'lost-answer', // a write committed, its answer lost (reset, 500, 502, 504)
  'slow', // answers slower than the client's timeout
  'malformed', // 200 with a body that is not JSON
  'cursor-loop', // a cursor offered twice: the listing cannot complete
  'pages', // duplicated and reordered pages
  'page-fails', // a list page that fails, for a while or for good
  'drift', // items created or deleted between the listing and the write (409/404)
  'token-expiry', // the bearer token expires mid-run; the token file was rotated
  'kill', // the process is SIGKILLed at a random call, then run again
  'rename-declared', // an item due for deletion is renamed to a declared name between listing and apply
  'shifting-pages', // a listing shifts between pages (sorted by name, an item renamed): one id, two names
  'two-writers', // two syncs at once on one state file: the writer lock makes one wait or refuses it
  'echo-secrets', // error bodies that echo passwords and tokens raw, JSON-escaped and URL-encoded
  'fifo-token', // a FIFO at tokensDir/<name> of a declared apikey
  'endless-body', // a list answer that streams without end
  'interrupt', // SIGINT mid-apply, then run again
] as const;

/**
 * The faults of issue 27, in schedules of their own (seeds 3000–3999, so the
 * schedules of the twenty families above replay as they always did). Their primary family
 * cycles with the seed; extras come from all twenty-five.
 */
export const issue27Families = [
  'paused-writer', // a writer SIGSTOPped mid-apply past the lock's stale time, then SIGCONTed, beside a second writer
  'by-id-404', // the by-id GET answers 404 while the listing shows the item
  'rotating-key-read-only', // the service rotates the integrator key at every exchange; its file is read-only
  'short-tokens', // access tokens of 1 s from a rotating integrator key, writes that wait longer in the queue
  'interrupt-deep-queue', // SIGINT with dozens of creates queued behind a rate-limited service
] as const;
export const allFaultFamilies = [...faultFamilies, ...issue27Families] as const;
export type FaultFamily = (typeof allFaultFamilies)[number];
/** Seeds from here to 3999 have an issue-27 family as their primary; all others one of the twenty. */
export const ISSUE_27_SEEDS = 3000;
const isIssue27Seed = (seed: number): boolean => seed >= ISSUE_27_SEEDS && seed < ISSUE_27_SEEDS + 1000;

/**
 * The labels by which the request log (or the runner, for what it plays itself: two writers,
 * a FIFO) says that a family's fault fired.
 */
export const firedAs: Readonly<Record<FaultFamily, readonly string[]>> = {
  'server-errors': ['server-errors-503', 'fail-rate'],
  'storm-503': ['storm-503'],
  maintenance: ['maintenance-window'],
  resets: ['reset'],
  'lost-answer': ['lost-answer'],
  slow: ['slow'],
  malformed: ['malformed'],
  'cursor-loop': ['cursor-loop'],
  pages: ['duplicate-page', 'reorder-page'],
  'page-fails': ['page-fails', 'page-fails-for-good'],
  drift: ['drift-create', 'drift-delete'],
  'token-expiry': ['token-expired'],
  kill: ['kill-point'],
  'rename-declared': ['rename-into-declared'],
  'shifting-pages': ['shifting-page'],
  'two-writers': ['two-writers', 'two-writers-one-refused'],
  'echo-secrets': ['echo-secrets'],
  'fifo-token': ['fifo-token'],
  'endless-body': ['endless-body'],
  interrupt: ['interrupt-point'],
  'paused-writer': ['paused-writer'],
  'by-id-404': ['by-id-404'],
  'rotating-key-read-only': ['rotating-key-read-only'],
  'short-tokens': ['short-tokens'],
  'interrupt-deep-queue': ['interrupt-deep-queue'],
};

export const USERS = '^/api/sshusers$';
export const USER_ITEM = '^/api/sshusers/\\d+$';
export const KEYS = '^/api/3rdparty/apikeys$';
export const KEY_ITEM = '^/api/3rdparty/apikeys/\\d+$';
const LISTS = '^/api/(sshusers|3rdparty/apikeys)$';

/** Labels of the rules that change the body of a 200 so the client cannot use it. */
export const corruptingLabels: ReadonlySet<string> = new Set(['malformed']);
/** The rule the runner watches to SIGKILL the process while the request is held. */
export const KILL_LABEL = 'kill-point';
/** The rule that holds the first requests while the runner rotates the token file. */
export const HOLD_LABEL = 'hold-for-rotation';
/** The rule the runner watches to send SIGINT while a write is held (mid-apply). */
export const INTERRUPT_LABEL = 'interrupt-point';
/** The rule whose answer never ends. */
export const ENDLESS_LABEL = 'endless-body';
/** The rule the runner watches to SIGSTOP a writer while its write is held (paused-writer). */
export const PAUSE_LABEL = 'pause-point';
/** The rule the runner watches to send SIGINT with a deep queue behind the held write. */
export const DEEP_INTERRUPT_LABEL = 'interrupt-deep-queue';
/** The rule that answers 404 to every by-id GET while the listing shows the items. */
export const BY_ID_404_LABEL = 'by-id-404';

export interface InitialUser {
  readonly username: string;
  readonly password: string;
}

export interface InitialKey {
  readonly name: string;
  readonly superuser: boolean;
  readonly roles: number[];
}

/** What the desired file says about one SSH user. */
export interface DeclaredUser {
  readonly username: string;
  readonly ensure: 'present' | 'absent';
  /** Where the password comes from; none: an existing user's password is left alone. */
  readonly password?: { readonly kind: 'env'; readonly name: string; readonly value: string } | { readonly kind: 'file'; readonly path: string; readonly value: string };
  /**
   * The password the state file says was last applied: equal to the declared one (nothing to
   * do), another one (the password changed: an update), or none (untracked).
   */
  readonly applied?: string;
}

export interface DeclaredKey {
  readonly name: string;
  readonly ensure: 'present' | 'absent';
  readonly superuser: boolean;
  readonly roles: number[];
  /** Pins the key of the initial state at this index (its id is known once seeded). */
  readonly pinsInitial?: number;
}

/**
 * Another client renames an initial item while amsync runs (rename-declared, shifting-pages):
 * once its rule has fired, the service is judged as if the item had been seeded under `to`.
 */
export interface Rename {
  readonly label: string;
  readonly kind: 'sshUsers' | 'apikeys';
  /** Index in the initial state (its id is index + 1). */
  readonly index: number;
  readonly to: string;
}

export interface ChaosSchedule {
  readonly seed: number;
  /** The primary family first; extras follow. */
  readonly families: readonly FaultFamily[];
  readonly initial: { readonly sshUsers: readonly InitialUser[]; readonly apikeys: readonly InitialKey[] };
  readonly users: readonly DeclaredUser[];
  readonly keys: readonly DeclaredKey[];
  readonly prune: { readonly sshUsers: boolean; readonly apikeys: boolean };
  /** Glob prefixes that are protected (`keep-*`). */
  readonly protect: { readonly sshUsers: readonly string[]; readonly apikeys: readonly string[] };
  /** Whether a state file with fingerprints exists before the run. */
  readonly withStateFile: boolean;
  /** The bearer token comes from a token file (always with token-expiry), else AMSYNC_TOKEN. */
  readonly tokenFromFile: boolean;
  readonly settings: {
    readonly timeoutMs: number;
    readonly pageSize: number;
    readonly maxAttempts: number;
    readonly concurrency: number;
  };
  /** Faults of the run under test. Rules match in order. */
  readonly faults: { readonly failRate: number; readonly rules: readonly FaultRule[] };
  /** Renames by another client that the rules make. */
  readonly renames: readonly Rename[];
  /** fifo-token: a FIFO sits at tokensDir/<this name> while faults last. */
  readonly fifoKey?: string;
  /**
   * two-writers: the lock timeout of both writers (0: one of them is refused). paused-writer:
   * the first writer is paused mid-apply, the second starts then and waits for the lock.
   */
  readonly writers?: { readonly lockTimeoutMs: number; readonly paused?: true };
  /**
   * rotating-key-read-only, short-tokens: the credential is an integrator key in a file
   * (keys/integrator-key), exchanged at the token endpoint for access tokens.
   */
  readonly integratorKey?: {
    /** The service answers a new key at every exchange; the old one works for graceSeconds more. */
    readonly rotate: boolean;
    readonly graceSeconds: number;
    readonly accessTokenTtlSeconds: number;
    /** The key file is read-only for the run under faults (a read-only volume). */
    readonly readOnlyFile: boolean;
  };
  /** The service's rate limit (requests per second) while faults last: writes wait in amsync's queue. */
  readonly rateLimit?: number;
  /** SSH users to create beyond the others (bulk-user-0 …): a queue deep enough to wait in. */
  readonly bulkUsers?: { readonly count: number; readonly password: { readonly kind: 'env'; readonly name: string; readonly value: string } };
}

const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)] as T;
const int = (rng: Rng, min: number, max: number): number => min + Math.floor(rng() * (max - min + 1));
const chance = (rng: Rng, p: number): boolean => rng() < p;
const round2 = (n: number): number => Math.round(n * 100) / 100;

/** Families that cannot be mixed into one run with the family on the left. */
const exclusive: Partial<Record<FaultFamily, readonly FaultFamily[]>> = {
  kill: ['token-expiry', 'interrupt', 'two-writers'],
  // A run again after a kill or an interrupt sets the rules afresh: the token would expire twice.
  'token-expiry': ['kill', 'interrupt'],
  // One signal at a time, to one process.
  interrupt: ['kill', 'two-writers', 'endless-body', 'token-expiry'],
  'two-writers': ['kill', 'interrupt'],
  // An endless listing ends the run before its writes: faults of the writes would never fire.
  'endless-body': ['interrupt', 'rename-declared', 'fifo-token'],
  'rename-declared': ['endless-body'],
  'fifo-token': ['endless-body'],
  // Two processes with tokens of their own; the first paused by the runner (no other signal).
  'paused-writer': ['kill', 'interrupt', 'two-writers', 'endless-body', 'token-expiry', 'rotating-key-read-only', 'short-tokens', 'interrupt-deep-queue'],
  // The deletes it is about come after the listing.
  'by-id-404': ['endless-body'],
  // An integrator key instead of a token (file): no token file to rotate, one process at a time.
  'rotating-key-read-only': ['token-expiry', 'two-writers', 'paused-writer', 'kill', 'interrupt', 'interrupt-deep-queue', 'short-tokens'],
  'short-tokens': ['token-expiry', 'two-writers', 'paused-writer', 'kill', 'rotating-key-read-only', 'endless-body'],
  'interrupt-deep-queue': ['kill', 'interrupt', 'two-writers', 'paused-writer', 'endless-body', 'token-expiry', 'rotating-key-read-only'],
};

/** Whether `f` may join `families` (neither excludes the other). */
function compatible(families: readonly FaultFamily[], f: FaultFamily): boolean {
  return !families.includes(f) && !families.some((g) => exclusive[g]?.includes(f) || exclusive[f]?.includes(g));
}

/**
 * The schedule of a seed. The primary family cycles with the seed, so every family gets its
 * share of any run of consecutive seeds; zero to two extra families are mixed in.
 */
export function makeSchedule(seed: number): ChaosSchedule {
  const rng = createRng(seed * 2654435761);
  const issue27 = isIssue27Seed(seed);
  const primary: FaultFamily = issue27 ? issue27Families[seed % issue27Families.length]! : faultFamilies[seed % faultFamilies.length]!;
  const families: FaultFamily[] = [primary];
  const extras = int(rng, 0, 2);
  for (let i = 0; i < extras; i += 1) {
    if (!issue27) {
      // As it always was, so that a seed below ISSUE_27_SEEDS replays the same schedule.
      const f = pick(rng, faultFamilies);
      if (families.includes(f) || families.some((g) => exclusive[g]?.includes(f))) continue;
      families.push(f);
      continue;
    }
    const f = pick(rng, allFaultFamilies);
    if (compatible(families, f)) families.push(f);
  }

  // The service before: SSH users (some protected by `keep-*`) and apikeys.
  const tag = seed.toString(36);
  const canary = (what: string) => `CANARY-${what}-${tag}-${Math.floor(rng() * 1e9).toString(36)}`;
  const userCount = int(rng, 5, 12);
  const keyCount = int(rng, 3, 8);
  const initialUsers: InitialUser[] = [];
  for (let i = 0; i < userCount; i += 1) {
    const username = chance(rng, 0.15) ? `keep-${i}` : `user-${i}`;
    initialUsers.push({ username, password: `initial-${i}` });
  }
  const initialKeys: InitialKey[] = [];
  for (let i = 0; i < keyCount; i += 1) {
    initialKeys.push({ name: chance(rng, 0.15) ? `keep-key-${i}` : `key-${i}`, superuser: chance(rng, 0.2), roles: roleSet(rng) });
  }

  // The desired file: existing users kept, re-passworded or deleted; new users created.
  const withStateFile = chance(rng, 0.6);
  const users: DeclaredUser[] = [];
  let envCount = 0;
  const password = (): DeclaredUser['password'] => {
    // A quote, a backslash, non-ASCII and white space: its JSON-escaped and URL-encoded forms
    // differ from it, so a scrubber that knows only the raw form lets them through.
    const value = `${canary('pw')} q"u\\oé`;
    if (chance(rng, 0.3)) return { kind: 'file', path: `secrets/pw-${envCount++}`, value };
    return { kind: 'env', name: `PW_${envCount++}`, value };
  };
  for (const u of initialUsers) {
    if (u.username.startsWith('keep-')) continue;
    const r = rng();
    if (r < 0.4) {
      const pw = chance(rng, 0.7) ? password() : undefined;
      // A tracked password is either the one declared (no change) or an older one (an update).
      const applied = pw && withStateFile && chance(rng, 0.7) ? (chance(rng, 0.5) ? pw.value : canary('old-pw')) : undefined;
      users.push({ username: u.username, ensure: 'present', ...(pw ? { password: pw } : {}), ...(applied ? { applied } : {}) });
    } else if (r < 0.6) {
      users.push({ username: u.username, ensure: 'absent' });
    }
  }
  for (let i = 0, n = int(rng, 1, 5); i < n; i += 1) users.push({ username: `new-user-${i}`, ensure: 'present', password: password() });
  if (chance(rng, 0.5)) users.push({ username: 'never-existed', ensure: 'absent' });
  // A queue deep enough to wait in: dozens of creates behind a rate-limited service.
  const bulk = families.includes('interrupt-deep-queue') || families.includes('short-tokens') ? { count: int(rng, 30, 60), password: { kind: 'env' as const, name: 'PW_BULK', value: `${canary('bulk-pw')} q"u\\oé` } } : undefined;
  for (let i = 0; i < (bulk?.count ?? 0); i += 1) users.push({ username: `bulk-user-${i}`, ensure: 'present', password: bulk!.password });

  // Apikeys: kept, updated (roles, superuser), renamed through a pinned id, deleted, created.
  const keys: DeclaredKey[] = [];
  let pinned = false;
  for (const [index, k] of initialKeys.entries()) {
    if (k.name.startsWith('keep-')) continue;
    const r = rng();
    if (r < 0.25) keys.push({ name: k.name, ensure: 'present', superuser: k.superuser, roles: k.roles });
    else if (r < 0.45) keys.push({ name: k.name, ensure: 'present', superuser: chance(rng, 0.5) ? !k.superuser : k.superuser, roles: roleSet(rng) });
    else if (r < 0.55 && !pinned) {
      pinned = true;
      keys.push({ name: `renamed-key-${index}`, ensure: 'present', superuser: k.superuser, roles: k.roles, pinsInitial: index });
    } else if (r < 0.7) keys.push({ name: k.name, ensure: 'absent', superuser: false, roles: [] });
  }
  for (let i = 0, n = int(rng, 1, 4); i < n; i += 1) keys.push({ name: `new-key-${i}`, ensure: 'present', superuser: chance(rng, 0.2), roles: roleSet(rng) });

  // A rename into a declared name is dangerous only for an item due for deletion: prune then.
  const prune = { sshUsers: chance(rng, 0.4) || families.includes('rename-declared'), apikeys: chance(rng, 0.4) };
  const protect = { sshUsers: chance(rng, 0.7) ? ['keep-*'] : [], apikeys: chance(rng, 0.7) ? ['keep-*'] : [] };
  const slow = families.includes('slow');
  const timeoutMs = slow ? int(rng, 250, 400) : 4000;
  const drawnPageSize = int(rng, 2, 6);
  const settings = {
    timeoutMs,
    // Pages of two make a listing of several pages, for a rename to land between them.
    pageSize: families.includes('shifting-pages') ? 2 : drawnPageSize,
    maxAttempts: int(rng, 5, 7),
    concurrency: int(rng, 2, 6),
  };
  // A deep queue: amsync's default ceiling (64 in flight), far above what the service allows.
  if (bulk) settings.concurrency = 64;
  const pinnedIndex = keys.find((k) => k.pinsInitial !== undefined)?.pinsInitial;
  const drawn = faultsFor(families, rng, settings.timeoutMs, pinnedIndex === undefined ? undefined : pinnedIndex + 1);
  const rules = [...drawn.rules];
  const scene: Scene = { initialUsers, initialKeys, users, keys, prune, pageSize: settings.pageSize, pinnedIndex };
  const renames: Rename[] = [];
  if (families.includes('rename-declared')) renames.push(...renameIntoDeclared(rng, scene, rules));
  if (families.includes('shifting-pages')) renames.push(...shiftingPages(rng, scene, rules, new Set(renames.map((r) => r.index))));
  const faults = { failRate: drawn.failRate, rules };
  const presentKeys = keys.filter((k) => k.ensure === 'present').map((k) => k.name);
  const fifoKey = families.includes('fifo-token') && presentKeys.length > 0 ? pick(rng, presentKeys) : undefined;
  const writers = families.includes('two-writers') ? { lockTimeoutMs: chance(rng, 0.5) ? 0 : 20_000 } : families.includes('paused-writer') ? { lockTimeoutMs: 30_000, paused: true as const } : undefined;
  const integratorKey = integratorKeyFor(families);
  // A service allowing a few requests a second (5–10 for Ctrl-C, 15–25 for short tokens): with
  // dozens of writes, most wait in amsync's queue, longer than an access token of one second lasts.
  const rateLimit = bulk ? (families.includes('interrupt-deep-queue') ? int(rng, 5, 10) : int(rng, 15, 25)) : undefined;
  return {
    seed,
    families,
    initial: { sshUsers: initialUsers, apikeys: initialKeys },
    users,
    keys,
    prune,
    protect,
    withStateFile,
    tokenFromFile: families.includes('token-expiry') || chance(rng, 0.5),
    settings,
    faults,
    renames,
    ...(fifoKey === undefined ? {} : { fifoKey }),
    ...(writers === undefined ? {} : { writers }),
    ...(integratorKey === undefined ? {} : { integratorKey }),
    ...(rateLimit === undefined ? {} : { rateLimit }),
    ...(bulk === undefined ? {} : { bulkUsers: bulk }),
  };
}

/**
 * The integrator key of the families that log in with one: rotated at every exchange, on a
 * read-only file (the old key dies at once, as a service without a grace would have it); or
 * rotated with the service's usual grace, for access tokens of one second.
 */
function integratorKeyFor(families: readonly FaultFamily[]): ChaosSchedule['integratorKey'] {
  if (families.includes('rotating-key-read-only')) return { rotate: true, graceSeconds: 0, accessTokenTtlSeconds: 900, readOnlyFile: true };
  if (families.includes('short-tokens')) return { rotate: true, graceSeconds: 60, accessTokenTtlSeconds: 1, readOnlyFile: false };
  return undefined;
}

/** What the renaming faults choose from. */
interface Scene {
  readonly initialUsers: readonly InitialUser[];
  readonly initialKeys: readonly InitialKey[];
  readonly users: readonly DeclaredUser[];
  readonly keys: readonly DeclaredKey[];
  readonly prune: { readonly sshUsers: boolean; readonly apikeys: boolean };
  readonly pageSize: number;
  readonly pinnedIndex: number | undefined;
}

/** Initial SSH users (by index) the file and prune call to delete; never a protected one. */
function usersDueForDeletion(scene: Scene): number[] {
  const declared = new Map(scene.users.map((u) => [u.username, u]));
  return scene.initialUsers.flatMap((u, i) => {
    if (u.username.startsWith('keep-')) return [];
    const d = declared.get(u.username);
    return d?.ensure === 'absent' || (d === undefined && scene.prune.sshUsers) ? [i] : [];
  });
}

/** Declared SSH users the service does not have yet: amsync is about to create them. */
function usersToCreate(scene: Scene): string[] {
  const initial = new Set(scene.initialUsers.map((u) => u.username));
  return scene.users.filter((u) => u.ensure === 'present' && !initial.has(u.username)).map((u) => u.username);
}

const renameBody = (kind: Rename['kind'], to: string) => (kind === 'sshUsers' ? { username: to } : { name: to });
const itemPath = (kind: Rename['kind'], index: number) => `${kind === 'sshUsers' ? '/api/sshusers' : '/api/3rdparty/apikeys'}/${index + 1}`;

/**
 * rename-declared: after the listing, another client renames an SSH user due for deletion to
 * the name of one amsync is about to create (the create then answers 409 and adopts it). The
 * rename comes with amsync's first write or its first read of one item (the re-read before a
 * delete), whichever is first; the second firing finds the name taken and changes nothing.
 */
function renameIntoDeclared(rng: Rng, scene: Scene, rules: FaultRule[]): Rename[] {
  const due = usersDueForDeletion(scene);
  const names = usersToCreate(scene);
  if (due.length === 0 || names.length === 0) return [];
  const rename: Rename = { label: 'rename-into-declared', kind: 'sshUsers', index: pick(rng, due), to: pick(rng, names) };
  const anotherClient = { method: 'PUT' as const, path: itemPath(rename.kind, rename.index), body: renameBody(rename.kind, rename.to) };
  rules.push({ label: rename.label, method: ['POST', 'PUT', 'DELETE'], times: 1, anotherClient });
  rules.push({ label: rename.label, method: 'GET', path: `${USER_ITEM}|${KEY_ITEM}`, times: 1, anotherClient });
  return [rename];
}

/**
 * shifting-pages: while amsync reads a listing in pages, another client renames an item it
 * has already read; the service (sorting by name) lists it again under the new name. An SSH
 * user due for deletion takes the name of one about to be created; an apikey (names are not
 * unique: a declared name would make a twin) takes a name nobody declares.
 */
function shiftingPages(rng: Rng, scene: Scene, rules: FaultRule[], renamedUsers: ReadonlySet<number>): Rename[] {
  const kind = pick(rng, ['sshUsers', 'apikeys'] as const);
  const count = kind === 'sshUsers' ? scene.initialUsers.length : scene.initialKeys.length;
  // On a page before the last, so a later page is read after the rename.
  const beforeLastPage = (i: number) => Math.floor(i / scene.pageSize) < Math.ceil(count / scene.pageSize) - 1 && !(kind === 'sshUsers' && renamedUsers.has(i));
  let candidates: number[];
  let to: string;
  if (kind === 'sshUsers') {
    const due = usersDueForDeletion(scene).filter(beforeLastPage);
    const names = usersToCreate(scene);
    const anyUser = scene.initialUsers.flatMap((u, i) => (u.username.startsWith('keep-') || !beforeLastPage(i) ? [] : [i]));
    candidates = due.length > 0 && names.length > 0 ? due : anyUser;
    to = due.length > 0 && names.length > 0 ? pick(rng, names) : 'shifted-user';
  } else {
    candidates = scene.initialKeys.flatMap((k, i) => (k.name.startsWith('keep-') || i === scene.pinnedIndex || !beforeLastPage(i) ? [] : [i]));
    to = 'shifted-key';
  }
  if (candidates.length === 0) return [];
  const index = pick(rng, candidates);
  const rename: Rename = { label: 'shifting-page', kind, index, to };
  // Fires on the first page after the one that holds the item.
  rules.push({ label: rename.label, method: 'GET', path: kind === 'sshUsers' ? USERS : KEYS, after: Math.floor(index / scene.pageSize) + 1, times: 1, shiftPage: { id: index + 1, to } });
  return [rename];
}

function roleSet(rng: Rng): number[] {
  return [1, 2, 3, 4].filter(() => chance(rng, 0.35));
}

/**
 * The rules of the chosen families. The kill point and the hold for a token rotation go
 * first, so they fire at their request whatever else is injected; every rule has a label,
 * so the request log says which fault shaped each answer.
 */
function faultsFor(families: readonly FaultFamily[], rng: Rng, timeoutMs: number, pinnedKeyId: number | undefined): ChaosSchedule['faults'] {
  const first: FaultRule[] = [];
  const rules: FaultRule[] = [];
  let failRate = 0;
  for (const family of families) {
    switch (family) {
      case 'server-errors': {
        failRate = round2(0.1 + rng() * 0.2);
        rules.push({ label: 'server-errors-503', status: 503, probability: round2(failRate / 3) });
        break;
      }
      case 'storm-503': {
        const retryAfter = pick(rng, ['seconds', 'date', 'zero'] as const);
        rules.push({
          label: 'storm-503',
          status: 503,
          after: int(rng, 0, 20),
          times: int(rng, 3, 8),
          ...(retryAfter === 'seconds' ? { retryAfter: 1 } : retryAfter === 'date' ? { retryAfterDateIn: 1 } : { retryAfter: 0 }),
        });
        break;
      }
      case 'maintenance':
        rules.push({ label: 'maintenance-window', status: 503, retryAfter: 1, after: int(rng, 0, 25), forMs: int(rng, 1000, 2500) });
        break;
      case 'resets':
        rules.push({ label: 'reset', reset: true, probability: round2(0.08 + rng() * 0.12), times: int(rng, 2, 8) });
        break;
      case 'lost-answer':
        rules.push({
          label: 'lost-answer',
          method: ['POST', 'PUT', 'DELETE'],
          commitThenFail: pick(rng, ['reset', 500, 502, 504] as const),
          probability: round2(0.25 + rng() * 0.35),
          times: int(rng, 1, 4),
        });
        break;
      case 'slow':
        rules.push({ label: 'slow', delayMs: Math.round(timeoutMs * (1.3 + rng())), probability: round2(0.1 + rng() * 0.2), times: int(rng, 1, 4) });
        break;
      case 'malformed':
        rules.push({ label: 'malformed', malformed: true, probability: round2(0.08 + rng() * 0.15), times: int(rng, 1, 3) });
        break;
      case 'cursor-loop':
        rules.push({ label: 'cursor-loop', method: 'GET', path: pick(rng, [USERS, KEYS]), cursorLoop: true, after: int(rng, 0, 1), times: 1 });
        break;
      case 'pages':
        rules.push({ label: 'duplicate-page', method: 'GET', path: LISTS, duplicatePage: true, probability: 0.35 });
        rules.push({ label: 'reorder-page', method: 'GET', path: LISTS, reorderPage: true, probability: 0.5 });
        break;
      case 'page-fails': {
        const forGood = chance(rng, 0.4);
        rules.push({
          label: forGood ? 'page-fails-for-good' : 'page-fails',
          method: 'GET',
          path: pick(rng, [USERS, KEYS]),
          status: pick(rng, [500, 502, 503, 504]),
          after: int(rng, 1, 3),
          ...(forGood ? {} : { times: int(rng, 1, 3) }),
        });
        break;
      }
      case 'drift': {
        // Another client creates an SSH user amsync is about to create (409), or deletes an
        // item amsync is about to update or delete (404). Not a pinned apikey: a pinned id
        // that no longer exists cannot be created again, by design.
        const keyItem = pinnedKeyId === undefined ? KEY_ITEM : `^/api/3rdparty/apikeys/(?!${pinnedKeyId}$)\\d+$`;
        rules.push({ label: 'drift-create', method: 'POST', path: USERS, concurrentWrite: 'create', probability: 0.5, times: int(rng, 1, 2) });
        rules.push({ label: 'drift-delete', method: ['PUT', 'DELETE'], path: `${USER_ITEM}|${keyItem}`, concurrentWrite: 'delete', probability: 0.5, times: int(rng, 1, 2) });
        break;
      }
      case 'token-expiry':
        // The first two requests (the two listings' first pages) are held while the runner
        // rotates the token file; a later request then finds its token expired.
        first.push({ label: HOLD_LABEL, times: 2, delayMs: 300 });
        first.push({ label: 'token-expired', after: int(rng, 0, 10), times: 1, expireToken: true });
        break;
      case 'kill':
        first.unshift({ label: KILL_LABEL, after: int(rng, 0, 20), times: 1, delayMs: 500 });
        break;
      case 'interrupt':
        // A write held long enough for the signal to land while it is in flight.
        first.unshift({ label: INTERRUPT_LABEL, method: ['POST', 'PUT', 'DELETE'], after: int(rng, 0, 3), times: 1, delayMs: 400 });
        break;
      case 'echo-secrets':
        // Writes carry passwords (and name apikeys whose tokens were listed); reads carry the bearer token.
        rules.push({ label: 'echo-secrets', method: ['POST', 'PUT', 'DELETE'], status: pick(rng, [400, 500, 502]), echo: pick(rng, ['json', 'text'] as const), probability: round2(0.3 + rng() * 0.4), times: int(rng, 2, 5) });
        rules.push({ label: 'echo-secrets', method: 'GET', status: pick(rng, [500, 502]), echo: pick(rng, ['json', 'text'] as const), probability: round2(0.1 + rng() * 0.2), times: int(rng, 1, 3) });
        break;
      case 'endless-body':
        // Every read of this listing, retries included: it cannot complete while faults last.
        rules.push({ label: ENDLESS_LABEL, method: 'GET', path: pick(rng, [USERS, KEYS]), endless: true });
        break;
      case 'rename-declared':
      case 'shifting-pages':
        // Their rules need the scene (see renameIntoDeclared and shiftingPages).
        break;
      case 'two-writers':
      case 'fifo-token':
        // Played by the runner: a second process, a FIFO in tokensDir.
        break;
      case 'paused-writer':
        // A write held while the runner pauses its writer (SIGSTOP): mid-apply, lock held.
        first.unshift({ label: PAUSE_LABEL, method: ['POST', 'PUT', 'DELETE'], after: int(rng, 0, 2), times: 1, delayMs: 300 });
        break;
      case 'by-id-404':
        // A gateway, or a service version without the item route: the listing shows the item,
        // its own URL answers 404 (the body the service gives for a missing item).
        rules.push({ label: BY_ID_404_LABEL, method: 'GET', path: `${USER_ITEM}|${KEY_ITEM}`, status: 404, errors: [{ field: 'id', type: 'not_found', msg: 'the item does not exist' }] });
        break;
      case 'interrupt-deep-queue':
        // Ctrl-C after a few creates, while the others wait in amsync's limiter and queue.
        first.unshift({ label: DEEP_INTERRUPT_LABEL, method: 'POST', path: USERS, after: int(rng, 4, 10), times: 1, delayMs: 300 });
        break;
      case 'rotating-key-read-only':
      case 'short-tokens':
        // Played by the emulator's token endpoint and the runner (integratorKey, rateLimit).
        break;
    }
  }
  return { failRate, rules: [...first, ...rules] };
}
