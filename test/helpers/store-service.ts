import { Store, type StoreResult } from '../../src/emulator/index.js';
import { AmsyncError } from '../../src/errors.js';
import type {
  AccessService,
  ActualSshUser,
  ApikeyChanges,
  ListApikeysOptions,
  ListedApikey,
  NewApikey,
  NewSshUser,
  SecretValue,
  SshUserChanges,
  TokenInfo,
  WriteOutcome,
} from '../../src/model/index.js';

type Op = 'listSshUsers' | 'listApikeys' | 'fetchSshUser' | 'fetchApikey' | 'createSshUser' | 'updateSshUser' | 'deleteSshUser' | 'createApikey' | 'updateApikey' | 'deleteApikey';

/** A hook run before an operation; it may change the state (drift) or throw (a fault). */
export type Hook = (service: StoreService, args: unknown[]) => void | 'commit-then-lose';

/** An SSH user as the tests read it back. */
export interface StoredUser {
  readonly id: number;
  readonly username: string;
  readonly level: string;
}

/** An apikey as the tests read it back, with its token's value. */
export interface StoredKey {
  readonly id: number;
  readonly name: string;
  readonly superuser: boolean;
  readonly roles: readonly number[];
  readonly tokenValue: string;
}

/**
 * The emulator's Store (the service's rules, no I/O) behind the AccessService port, for unit
 * tests of apply and sync: the same store the emulator serves over HTTP, not a third model of
 * the service. Tests add what HTTP cannot: a log of the calls, hooks that run before an
 * operation (drift by another writer, a fault), and a create whose answer is lost after it
 * committed. Levels `n1`–`n3` are allowed; roles 1–9 exist; tokens read `tok-<id>`; one id
 * sequence serves both kinds, from 100.
 */
export class StoreService implements AccessService {
  readonly store: Store;
  calls: string[] = [];
  readonly #hooks = new Map<Op, Hook[]>();

  constructor() {
    this.store = new Store(
      { now: () => new Date('2025-01-01T00:00:00Z'), newToken: () => `tok-${this.#upcomingKeyId() - 1}`, passwordPepper: 'test-pepper', levels: ['n1', 'n2', 'n3'] },
      Array.from({ length: 9 }, (_, i) => ({ id: i + 1, name: `role-${i + 1}` })),
    );
    this.startIdsAt(100);
  }

  /** Ids the service assigns start here (tests seed lower ids of their own). */
  startIdsAt(n: number): void {
    const data = this.store.exportData();
    this.store.importData({ ...data, nextIds: { sshUsers: n, apikeys: n } });
  }

  seedUser(username: string, level = 'n1', fixedId?: number): number {
    return this.putUser({ id: fixedId ?? this.#upcomingUserId(), username, level });
  }

  seedKey(name: string, roles: number[] = [], superuser = false, fixedId?: number): number {
    const id = fixedId ?? this.#upcomingKeyId();
    return this.putKey({ id, name, roles, superuser, tokenValue: `tok-${id}` });
  }

  /** Adds or replaces a user with this id, as another writer would (ids to come stay as they are). */
  putUser(user: StoredUser): number {
    const data = this.store.exportData();
    const at = '2025-01-01T00:00:00.000Z';
    const rest = data.sshUsers.filter((u) => u.id !== user.id);
    const nextIds = { ...data.nextIds, sshUsers: Math.max(data.nextIds.sshUsers, user.id + 1) };
    this.store.importData({ ...data, nextIds, sshUsers: [...rest, { ...user, passwordHash: null, passwordVersion: 0, created_at: at, updated_at: at }].sort((a, b) => a.id - b.id) });
    this.#shareIds();
    return user.id;
  }

  putKey(key: StoredKey): number {
    const data = this.store.exportData();
    const at = '2025-01-01T00:00:00.000Z';
    const rest = data.apikeys.filter((k) => k.id !== key.id);
    const record = { id: key.id, name: key.name, superuser: key.superuser, roles: [...key.roles], token: key.tokenValue, created_at: at, updated_at: at };
    const nextIds = { ...data.nextIds, apikeys: Math.max(data.nextIds.apikeys, key.id + 1) };
    this.store.importData({ ...data, nextIds, apikeys: [...rest, record].sort((a, b) => a.id - b.id) });
    this.#shareIds();
    return key.id;
  }

  /** Removes an item behind amsync's back (another writer); false when there was none. */
  dropUser(id: number): boolean {
    const deleted = this.store.prepareDeleteSshUser(id);
    if (deleted.ok) deleted.value();
    return deleted.ok;
  }

  dropKey(id: number): boolean {
    const deleted = this.store.prepareDeleteApikey(id);
    if (deleted.ok) deleted.value();
    return deleted.ok;
  }

  /** The users as the service holds them now, by id. */
  get users(): ReadonlyMap<number, StoredUser> {
    return new Map(this.store.exportData().sshUsers.map((u) => [u.id, { id: u.id, username: u.username, level: u.level }]));
  }

  get keys(): ReadonlyMap<number, StoredKey> {
    return new Map(this.store.exportData().apikeys.map((k) => [k.id, { id: k.id, name: k.name, superuser: k.superuser, roles: k.roles, tokenValue: k.token }]));
  }

  /** Whether the user's password is now `password` (the store keeps only a hash). */
  hasPassword(username: string, password: string): boolean {
    const checked = this.store.checkPassword(username, password);
    return checked.ok && checked.value.match;
  }

  /** Runs `hook` before the next call of `op` (once). */
  before(op: Op, hook: Hook): void {
    const list = this.#hooks.get(op) ?? [];
    list.push(hook);
    this.#hooks.set(op, list);
  }

  async listSshUsers(): Promise<ActualSshUser[]> {
    this.#enter('listSshUsers', []);
    return [...this.users.values()];
  }

  async listApikeys(options?: ListApikeysOptions): Promise<ListedApikey[]> {
    this.#enter('listApikeys', []);
    return [...this.keys.values()].map((k) => listed(k, options?.tokens ?? true));
  }

  async listRoles(): Promise<null> {
    return null;
  }

  async userInfo(): Promise<TokenInfo | null> {
    return null;
  }

  async fetchSshUser(id: number): Promise<ActualSshUser | undefined> {
    this.#enter('fetchSshUser', [id]);
    return this.users.get(id);
  }

  async fetchApikey(id: number): Promise<ListedApikey | undefined> {
    this.#enter('fetchApikey', [id]);
    const k = this.keys.get(id);
    return k && listed(k, true);
  }

  async createSshUser(body: NewSshUser): Promise<WriteOutcome> {
    const lose = this.#enter('createSshUser', [body.username]);
    const created = commit(this.store.prepareCreateSshUser({ username: body.username, level: body.level, password: body.password.reveal() }));
    this.#shareIds();
    if (lose) throw apiError('unknown_outcome');
    return { id: created.id, accepted: false };
  }

  async updateSshUser(id: number, body: SshUserChanges): Promise<WriteOutcome> {
    this.#enter('updateSshUser', [id]);
    commit(this.store.prepareUpdateSshUser(id, { ...body, password: body.password?.reveal() }));
    return { id, accepted: false };
  }

  async deleteSshUser(id: number): Promise<void> {
    this.#enter('deleteSshUser', [id]);
    commit(this.store.prepareDeleteSshUser(id));
  }

  async createApikey(body: NewApikey): Promise<WriteOutcome> {
    const lose = this.#enter('createApikey', [body.name]);
    const created = commit(this.store.prepareCreateApikey({ name: body.name, superuser: body.superuser, roles: body.roles }));
    this.#shareIds();
    if (lose) throw apiError('unknown_outcome');
    return { id: created.id, accepted: false, token: secretOf(created.token) };
  }

  async updateApikey(id: number, body: ApikeyChanges): Promise<WriteOutcome> {
    this.#enter('updateApikey', [id]);
    commit(this.store.prepareUpdateApikey(id, body));
    return { id, accepted: false };
  }

  async deleteApikey(id: number): Promise<void> {
    this.#enter('deleteApikey', [id]);
    commit(this.store.prepareDeleteApikey(id));
  }

  #enter(op: Op, args: unknown[]): 'commit-then-lose' | undefined {
    this.calls.push(`${op}${args.length ? ` ${args.filter((a) => typeof a !== 'object').join(' ')}` : ''}`.trim());
    const hook = this.#hooks.get(op)?.shift();
    return hook ? (hook(this, args) ?? undefined) : undefined;
  }

  /**
   * One id sequence for both kinds, as the tests expect (a user 100, then a key 101): the
   * store counts each kind apart, so both counters move to the larger after each write.
   */
  #shareIds(): void {
    const data = this.store.exportData();
    const next = Math.max(data.nextIds.sshUsers, data.nextIds.apikeys);
    if (data.nextIds.sshUsers !== next || data.nextIds.apikeys !== next) this.store.importData({ ...data, nextIds: { sshUsers: next, apikeys: next } });
  }

  #upcomingUserId(): number {
    return this.store.exportData().nextIds.sshUsers;
  }

  #upcomingKeyId(): number {
    return this.store.exportData().nextIds.apikeys;
  }
}

/** The store's answer as the client would give it: the value, or an error with the client's code. */
function commit<T>(result: StoreResult<() => T>): T {
  if (result.ok) return result.value();
  throw apiError(result.status === 404 ? 'not_found' : result.status === 409 ? 'conflict' : 'bad_request');
}

function listed(k: StoredKey, withToken: boolean): ListedApikey {
  // The port's contract: roles as sorted unique ids.
  const key = { id: k.id, name: k.name, superuser: k.superuser, roles: [...new Set(k.roles)].sort((a, b) => a - b) };
  return withToken ? { ...key, token: secretOf(k.tokenValue) } : key;
}

export function apiError(code: string): AmsyncError {
  return new AmsyncError(code, `store ${code}`);
}

function secretOf(value: string): SecretValue {
  return { reveal: () => value, toString: () => '[redacted]', toJSON: () => '[redacted]' } as SecretValue;
}
