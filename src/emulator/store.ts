import { createHash } from 'node:crypto';
import { checkApikeyBody, checkSshUserBody, LEVELS } from './body-validation.js';
import { Collection, type Page } from './collection.js';
import type { ApikeyView, EmulatorStateSnapshot, FieldError, RoleDetailView, RoleInput, SeedData, SeedResult, SshUserState, SshUserView } from './types.js';

/**
 * The service's state and rules, with no I/O: the clock, token generation and the password
 * pepper come in through StoreDeps, so tests drive it directly and the HTTP layer only
 * translates. Every operation answers a StoreResult carrying the status the API gives.
 */

export interface StoreDeps {
  now(): Date;
  /** A fresh random apikey token. */
  newToken(): string;
  /** Mixed into password hashes, so state and data files never hold a password in the clear. */
  passwordPepper: string;
  /** The levels an SSH user may have. @default LEVELS (`n1`, the only one the service's API specification documents) */
  levels?: readonly string[];
}

export type StoreResult<T> = { ok: true; value: T } | { ok: false; status: 400 | 404 | 409; errors: FieldError[] };

/** A write that passed every check and has not happened yet; calling it performs it. */
export type Prepared<T> = StoreResult<() => T>;

export interface SshUserRecord {
  id: number;
  username: string;
  level: string;
  passwordHash: string | null;
  passwordVersion: number;
  created_at: string;
  updated_at: string;
}

export interface ApikeyRecord {
  id: number;
  name: string;
  superuser: boolean;
  roles: number[];
  token: string;
  created_at: string;
  updated_at: string;
}

/** What a data file holds (persistence.ts writes it as JSON). */
export interface StoreData {
  version: 1;
  passwordPepper: string;
  nextIds: { sshUsers: number; apikeys: number };
  sshUsers: SshUserRecord[];
  apikeys: ApikeyRecord[];
}

// Distinct keys make a users cursor invalid for apikeys (and the reverse): a client mixing them up gets 400.
const USERS_CURSOR_KEY = 0x5a17c3e1;
const APIKEYS_CURSOR_KEY = 0x2c9b8f47;
const ROLES_CURSOR_KEY = 0x61d3a90b;

/** The kinds the API lists with cursors. */
export type ListedKind = 'sshUsers' | 'apikeys' | 'roles';

export class Store {
  private readonly users = new Collection<SshUserRecord>(USERS_CURSOR_KEY);
  private readonly apikeys = new Collection<ApikeyRecord>(APIKEYS_CURSOR_KEY);
  private readonly usernames = new Map<string, number>();
  /** Roles are configured, not written through the API: reset and seed leave them alone. */
  private readonly roleRecords = new Collection<RoleDetailView>(ROLES_CURSOR_KEY);
  private readonly roles: Map<number, string>;
  private pepper: string;

  constructor(
    private readonly deps: StoreDeps,
    roles: readonly RoleInput[],
  ) {
    const at = deps.now().toISOString();
    for (const r of roles) this.roleRecords.insert({ id: r.id, name: r.name, scopes: (r.scopes ?? []).map((s) => ({ ...s })), created_at: at, updated_at: at });
    this.roles = new Map(roles.map((r) => [r.id, r.name]));
    this.pepper = deps.passwordPepper;
  }

  // ---- reads ----

  /** Every role with its scopes, in id order. */
  listRoles(): RoleDetailView[] {
    return this.roleRecords.values().map(roleView);
  }

  listRolePage(cursor: number, size: number, advance = size): StoreResult<Page<RoleDetailView>> {
    const page = this.roleRecords.page(cursor, size, advance);
    if (page === null) return badCursor();
    return { ok: true, value: { ...page, items: page.items.map(roleView) } };
  }

  /** The `cursorLoop` fault's `next` for a page of `kind` (see Collection.loopCursor). */
  loopCursor(kind: ListedKind, position: number, size: number): number | null {
    const collection = kind === 'sshUsers' ? this.users : kind === 'apikeys' ? this.apikeys : this.roleRecords;
    return collection.loopCursor(position, size);
  }

  listSshUsers(cursor: number, size: number, advance = size): StoreResult<Page<SshUserView>> {
    const page = this.users.page(cursor, size, advance);
    if (page === null) return badCursor();
    return { ok: true, value: { ...page, items: page.items.map((u) => userView(u)) } };
  }

  listApikeys(cursor: number, size: number, advance = size): StoreResult<Page<ApikeyView>> {
    const page = this.apikeys.page(cursor, size, advance);
    if (page === null) return badCursor();
    return { ok: true, value: { ...page, items: page.items.map((k) => this.apikeyView(k)) } };
  }

  getSshUser(id: number): StoreResult<SshUserView> {
    const user = this.users.get(id);
    return user ? { ok: true, value: userView(user) } : notFound('sshUser', id);
  }

  getApikey(id: number): StoreResult<ApikeyView> {
    const key = this.apikeys.get(id);
    return key ? { ok: true, value: this.apikeyView(key) } : notFound('apikey', id);
  }

  hasSshUser(id: number): boolean {
    return this.users.get(id) !== undefined;
  }

  hasApikey(id: number): boolean {
    return this.apikeys.get(id) !== undefined;
  }

  // ---- SSH user writes ----

  prepareCreateSshUser(body: unknown): Prepared<SshUserView> {
    const checked = checkSshUserBody(body, 'create', this.deps.levels);
    if (!checked.ok) return invalid(checked.errors);
    const { username, level, password } = checked.value as Required<typeof checked.value>;
    if (this.usernames.has(username)) return duplicatedUsername(username);
    return ok(() => {
      const at = this.stamp();
      const user: SshUserRecord = {
        id: this.users.allocateId(),
        username,
        level,
        passwordHash: this.hash(password),
        passwordVersion: 1,
        created_at: at,
        updated_at: at,
      };
      this.insertUser(user);
      return userView(user);
    });
  }

  prepareUpdateSshUser(id: number, body: unknown): Prepared<SshUserView> {
    const user = this.users.get(id);
    if (!user) return notFound('sshUser', id);
    const checked = checkSshUserBody(body, 'update', this.deps.levels);
    if (!checked.ok) return invalid(checked.errors);
    const change = checked.value;
    if (change.username !== undefined && change.username !== user.username && this.usernames.has(change.username)) {
      return duplicatedUsername(change.username);
    }
    return ok(() => {
      let changed = false;
      if (change.username !== undefined && change.username !== user.username) {
        this.usernames.delete(user.username);
        this.usernames.set(change.username, user.id);
        user.username = change.username;
        changed = true;
      }
      if (change.level !== undefined && change.level !== user.level) {
        user.level = change.level;
        changed = true;
      }
      if (change.password !== undefined) {
        // A password write always counts, even with the same value: the service cannot tell.
        user.passwordHash = this.hash(change.password);
        user.passwordVersion += 1;
        changed = true;
      }
      if (changed) user.updated_at = this.stamp();
      return userView(user);
    });
  }

  prepareDeleteSshUser(id: number): Prepared<Record<string, never>> {
    const user = this.users.get(id);
    if (!user) return notFound('sshUser', id);
    return ok(() => {
      this.users.remove(id);
      this.usernames.delete(user.username);
      return {};
    });
  }

  // ---- apikey writes ----

  prepareCreateApikey(body: unknown): Prepared<ApikeyView> {
    const checked = checkApikeyBody(body, 'create', (r) => this.roles.has(r));
    if (!checked.ok) return invalid(checked.errors);
    const { name, superuser = false, roles = [] } = checked.value;
    return ok(() => {
      const at = this.stamp();
      const key: ApikeyRecord = {
        id: this.apikeys.allocateId(),
        name: name as string,
        superuser,
        roles,
        token: this.deps.newToken(),
        created_at: at,
        updated_at: at,
      };
      this.apikeys.insert(key);
      return this.apikeyView(key);
    });
  }

  prepareUpdateApikey(id: number, body: unknown): Prepared<ApikeyView> {
    const key = this.apikeys.get(id);
    if (!key) return notFound('apikey', id);
    const checked = checkApikeyBody(body, 'update', (r) => this.roles.has(r));
    if (!checked.ok) return invalid(checked.errors);
    const change = checked.value;
    return ok(() => {
      let changed = false;
      if (change.name !== undefined && change.name !== key.name) {
        key.name = change.name;
        changed = true;
      }
      if (change.superuser !== undefined && change.superuser !== key.superuser) {
        key.superuser = change.superuser;
        changed = true;
      }
      if (change.roles !== undefined && !sameList(change.roles, key.roles)) {
        key.roles = change.roles;
        changed = true;
      }
      if (changed) key.updated_at = this.stamp();
      return this.apikeyView(key);
    });
  }

  prepareDeleteApikey(id: number): Prepared<Record<string, never>> {
    if (!this.apikeys.get(id)) return notFound('apikey', id);
    return ok(() => {
      this.apikeys.remove(id);
      return {};
    });
  }

  // ---- control ----

  /** Empties both kinds and restarts ids at 1; roles stay. */
  reset(): void {
    this.users.clear();
    this.apikeys.clear();
    this.usernames.clear();
  }

  /**
   * Adds items under the API's rules (unique usernames, known levels and roles), all or none.
   * `count` adds synthetic items cheaply, for benchmarks at 100k items.
   */
  seed(data: SeedData): StoreResult<SeedResult> {
    const errors: FieldError[] = [];
    const names = new Set<string>();
    for (const [i, u] of (data.sshUsers ?? []).entries()) {
      const level = u.level ?? 'n1';
      const levels = this.deps.levels ?? LEVELS;
      if (!levels.includes(level)) errors.push({ field: `sshUsers[${i}].level`, type: 'invalid', msg: `level must be one of: ${levels.join(', ')}` });
      if (this.usernames.has(u.username) || names.has(u.username)) {
        errors.push({ field: `sshUsers[${i}].username`, type: 'duplicated', msg: `username '${u.username}' already exists` });
      }
      names.add(u.username);
    }
    for (const [i, k] of (data.apikeys ?? []).entries()) {
      for (const r of k.roles ?? []) {
        if (!this.roles.has(r)) errors.push({ field: `apikeys[${i}].roles`, type: 'not_found', msg: `role ${r} does not exist` });
      }
    }
    if (errors.length > 0) return { ok: false, status: 400, errors };

    const at = this.stamp();
    const result: SeedResult = { sshUsers: [], apikeys: [] };
    for (const u of data.sshUsers ?? []) {
      const password = u.password;
      const user = this.newUserRecord(u.username, u.level ?? 'n1', password === undefined ? null : this.hash(password), at);
      result.sshUsers.push(userView(user));
    }
    for (let n = 0; n < (data.count?.sshUsers ?? 0); n += 1) {
      const id = this.users.upcomingId;
      let username = `bench-user-${id}`;
      for (let s = 2; this.usernames.has(username); s += 1) username = `bench-user-${id}-${s}`;
      result.sshUsers.push(userView(this.newUserRecord(username, 'n1', null, at)));
    }
    for (const k of data.apikeys ?? []) {
      result.apikeys.push(this.apikeyView(this.newApikeyRecord(k.name, k.superuser ?? false, [...new Set(k.roles ?? [])], at)));
    }
    for (let n = 0; n < (data.count?.apikeys ?? 0); n += 1) {
      const key = this.newApikeyRecord(`bench-key-${this.apikeys.upcomingId}`, false, [], at);
      result.apikeys.push(this.apikeyView(key));
    }
    return { ok: true, value: result };
  }

  snapshot(): Omit<EmulatorStateSnapshot, 'pendingWrites'> {
    return {
      sshUsers: this.users.values().map((u): SshUserState => ({ ...userView(u), passwordSet: u.passwordHash !== null, passwordVersion: u.passwordVersion })),
      apikeys: this.apikeys.values().map((k) => this.apikeyView(k)),
      roles: this.listRoles(),
    };
  }

  checkPassword(username: string, password: string): StoreResult<{ match: boolean }> {
    const id = this.usernames.get(username);
    const user = id === undefined ? undefined : this.users.get(id);
    if (!user) return { ok: false, status: 404, errors: [{ field: 'username', type: 'not_found', msg: `no SSH user '${username}'` }] };
    return { ok: true, value: { match: user.passwordHash !== null && user.passwordHash === this.hash(password) } };
  }

  exportData(): StoreData {
    return {
      version: 1,
      passwordPepper: this.pepper,
      nextIds: { sshUsers: this.users.upcomingId, apikeys: this.apikeys.upcomingId },
      sshUsers: this.users.values(),
      apikeys: this.apikeys.values(),
    };
  }

  /** Replaces the state with a data file's; the caller has validated its shape. */
  importData(data: StoreData): void {
    this.reset();
    this.pepper = data.passwordPepper;
    for (const u of data.sshUsers) this.insertUser({ ...u });
    for (const k of data.apikeys) this.apikeys.insert({ ...k, roles: [...k.roles] });
    this.users.setUpcomingId(data.nextIds.sshUsers);
    this.apikeys.setUpcomingId(data.nextIds.apikeys);
  }

  // ---- internals ----

  private newUserRecord(username: string, level: string, passwordHash: string | null, at: string): SshUserRecord {
    const user: SshUserRecord = {
      id: this.users.allocateId(),
      username,
      level,
      passwordHash,
      passwordVersion: passwordHash === null ? 0 : 1,
      created_at: at,
      updated_at: at,
    };
    this.insertUser(user);
    return user;
  }

  private newApikeyRecord(name: string, superuser: boolean, roles: number[], at: string): ApikeyRecord {
    const key: ApikeyRecord = { id: this.apikeys.allocateId(), name, superuser, roles, token: this.deps.newToken(), created_at: at, updated_at: at };
    this.apikeys.insert(key);
    return key;
  }

  private insertUser(user: SshUserRecord): void {
    if (this.usernames.has(user.username)) throw new RangeError(`duplicate username '${user.username}'`);
    this.users.insert(user);
    this.usernames.set(user.username, user.id);
  }

  private apikeyView(k: ApikeyRecord): ApikeyView {
    return {
      id: k.id,
      name: k.name,
      superuser: k.superuser,
      // A data file may name a role that a later --roles file dropped; show it rather than fail.
      roles: k.roles.map((id) => ({ id, name: this.roles.get(id) ?? `role-${id}` })),
      token: k.token,
      created_at: k.created_at,
      updated_at: k.updated_at,
    };
  }

  private stamp(): string {
    return this.deps.now().toISOString();
  }

  private hash(password: string): string {
    return createHash('sha256').update(this.pepper).update('\0').update(password).digest('hex');
  }
}

function roleView(r: RoleDetailView): RoleDetailView {
  return { id: r.id, name: r.name, scopes: r.scopes.map((s) => ({ ...s })), created_at: r.created_at, updated_at: r.updated_at };
}

function userView(u: SshUserRecord): SshUserView {
  return { id: u.id, username: u.username, level: u.level, created_at: u.created_at, updated_at: u.updated_at };
}

function ok<T>(value: T): { ok: true; value: T } {
  return { ok: true, value };
}

function invalid(errors: FieldError[]): StoreResult<never> {
  return { ok: false, status: 400, errors };
}

function notFound(kind: 'sshUser' | 'apikey', id: number): StoreResult<never> {
  const what = kind === 'sshUser' ? 'SSH user' : 'apikey';
  return { ok: false, status: 404, errors: [{ field: 'id', type: 'not_found', msg: `${what} ${id} does not exist` }] };
}

function duplicatedUsername(username: string): StoreResult<never> {
  return { ok: false, status: 409, errors: [{ field: 'username', type: 'duplicated', msg: `username '${username}' already exists` }] };
}

function badCursor(): StoreResult<never> {
  return { ok: false, status: 400, errors: [{ field: 'cursor', type: 'invalid', msg: 'cursor is not a value this service handed out' }] };
}

function sameList(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}
