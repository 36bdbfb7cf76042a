import type { FaultRule } from '../../src/emulator/index.js';
import { createRng, type Rng } from '../../src/emulator/rng.js';

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
] as const;
export type FaultFamily = (typeof faultFamilies)[number];

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
}

const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)] as T;
const int = (rng: Rng, min: number, max: number): number => min + Math.floor(rng() * (max - min + 1));
const chance = (rng: Rng, p: number): boolean => rng() < p;
const round2 = (n: number): number => Math.round(n * 100) / 100;

/** Families that cannot be mixed into one run with the family on the left. */
const exclusive: Partial<Record<FaultFamily, readonly FaultFamily[]>> = {
  kill: ['token-expiry'],
  'token-expiry': ['kill'],
};

/**
 * The schedule of a seed. The primary family cycles with the seed, so every family gets its
 * share of any run of consecutive seeds; zero to two extra families are mixed in.
 */
export function makeSchedule(seed: number): ChaosSchedule {
  const rng = createRng(seed * 2654435761);
  const primary = faultFamilies[seed % faultFamilies.length]!;
  const families: FaultFamily[] = [primary];
  const extras = int(rng, 0, 2);
  for (let i = 0; i < extras; i += 1) {
    const f = pick(rng, faultFamilies);
    if (families.includes(f) || families.some((g) => exclusive[g]?.includes(f))) continue;
    families.push(f);
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
    const value = canary('pw');
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

  const prune = { sshUsers: chance(rng, 0.4), apikeys: chance(rng, 0.4) };
  const protect = { sshUsers: chance(rng, 0.7) ? ['keep-*'] : [], apikeys: chance(rng, 0.7) ? ['keep-*'] : [] };
  const slow = families.includes('slow');
  const settings = {
    timeoutMs: slow ? int(rng, 250, 400) : 4000,
    pageSize: int(rng, 2, 6),
    maxAttempts: int(rng, 5, 7),
    concurrency: int(rng, 2, 6),
  };
  const pinnedIndex = keys.find((k) => k.pinsInitial !== undefined)?.pinsInitial;
  const faults = faultsFor(families, rng, settings.timeoutMs, pinnedIndex === undefined ? undefined : pinnedIndex + 1);
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
  };
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
    }
  }
  return { failRate, rules: [...first, ...rules] };
}
