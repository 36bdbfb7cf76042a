import type { ApikeyBody, ServiceWriter, SshUserBody, WriteOutcome } from '../../src/apply/index.js';
import { AmsyncError } from '../../src/errors.js';
import type { SecretValue } from '../../src/model/index.js';
import type { RemoteApikey, RemoteSshUser } from '../../src/state/index.js';

type Op = 'listSshUsers' | 'listApikeys' | 'fetchSshUser' | 'fetchApikey' | 'createSshUser' | 'updateSshUser' | 'deleteSshUser' | 'createApikey' | 'updateApikey' | 'deleteApikey';

/** A hook run before an operation; it may change the state (drift) or throw (a fault). */
export type Hook = (service: FakeService, args: unknown[]) => void | 'commit-then-lose';

/**
 * An in-memory service with the real one's rules (unique usernames, ids assigned here,
 * 404 for unknown ids), for unit tests of apply. Faults are injected per operation.
 */
export class FakeService implements ServiceWriter {
  users = new Map<number, RemoteSshUser & { password?: string }>();
  keys = new Map<number, Omit<RemoteApikey, 'roles' | 'token'> & { roles: number[]; tokenValue: string }>();
  calls: string[] = [];
  private nextId = 100;
  /** Ids the service assigns start here (tests seed lower ids of their own). */
  startIdsAt(n: number): void {
    this.nextId = n;
  }
  private hooks = new Map<Op, Hook[]>();

  seedUser(username: string, level = 'n1', fixedId?: number): number {
    const id = fixedId ?? this.nextId++;
    this.users.set(id, { id, username, level });
    return id;
  }

  seedKey(name: string, roles: number[] = [], superuser = false, fixedId?: number): number {
    const id = fixedId ?? this.nextId++;
    this.keys.set(id, { id, name, roles, superuser, tokenValue: `tok-${id}` });
    return id;
  }

  /** Runs `hook` before the next call of `op` (once). */
  before(op: Op, hook: Hook): void {
    const list = this.hooks.get(op) ?? [];
    list.push(hook);
    this.hooks.set(op, list);
  }

  private enter(op: Op, args: unknown[]): 'commit-then-lose' | undefined {
    this.calls.push(`${op}${args.length ? ` ${args.filter((a) => typeof a !== 'object').join(' ')}` : ''}`.trim());
    const hook = this.hooks.get(op)?.shift();
    return hook ? (hook(this, args) ?? undefined) : undefined;
  }

  async listSshUsers(): Promise<RemoteSshUser[]> {
    this.enter('listSshUsers', []);
    return [...this.users.values()].map(({ id, username, level }) => ({ id, username, level }));
  }

  async listApikeys(): Promise<RemoteApikey[]> {
    this.enter('listApikeys', []);
    return [...this.keys.values()].map((k) => ({ id: k.id, name: k.name, superuser: k.superuser, roles: k.roles.map((id) => ({ id })), token: secretOf(k.tokenValue) }));
  }

  async fetchSshUser(id: number): Promise<RemoteSshUser | undefined> {
    this.enter('fetchSshUser', [id]);
    const u = this.users.get(id);
    return u && { id: u.id, username: u.username, level: u.level };
  }

  async fetchApikey(id: number): Promise<RemoteApikey | undefined> {
    this.enter('fetchApikey', [id]);
    const k = this.keys.get(id);
    return k && { id: k.id, name: k.name, superuser: k.superuser, roles: k.roles.map((r) => ({ id: r })), token: secretOf(k.tokenValue) };
  }

  async createSshUser(body: { username: string; level: string; password: SecretValue }): Promise<WriteOutcome> {
    const lose = this.enter('createSshUser', [body.username]);
    if ([...this.users.values()].some((u) => u.username === body.username)) throw apiError('conflict');
    const id = this.nextId++;
    this.users.set(id, { id, username: body.username, level: body.level, password: body.password.reveal() });
    if (lose) throw apiError('unknown_outcome');
    return { id, accepted: false };
  }

  async updateSshUser(id: number, body: SshUserBody): Promise<WriteOutcome> {
    this.enter('updateSshUser', [id]);
    const u = this.users.get(id);
    if (!u) throw apiError('not_found');
    if (body.username !== undefined && [...this.users.values()].some((x) => x.username === body.username && x.id !== id)) throw apiError('conflict');
    this.users.set(id, { ...u, ...(body.username ? { username: body.username } : {}), ...(body.level ? { level: body.level } : {}), ...(body.password ? { password: body.password.reveal() } : {}) });
    return { id, accepted: false };
  }

  async deleteSshUser(id: number): Promise<void> {
    this.enter('deleteSshUser', [id]);
    if (!this.users.delete(id)) throw apiError('not_found');
  }

  async createApikey(body: Required<ApikeyBody>): Promise<WriteOutcome> {
    const lose = this.enter('createApikey', [body.name]);
    const id = this.nextId++;
    this.keys.set(id, { id, name: body.name!, superuser: body.superuser!, roles: [...body.roles!], tokenValue: `tok-${id}` });
    if (lose) throw apiError('unknown_outcome');
    return { id, accepted: false, token: secretOf(`tok-${id}`) };
  }

  async updateApikey(id: number, body: ApikeyBody): Promise<WriteOutcome> {
    this.enter('updateApikey', [id]);
    const k = this.keys.get(id);
    if (!k) throw apiError('not_found');
    this.keys.set(id, { ...k, ...(body.name !== undefined ? { name: body.name } : {}), ...(body.superuser !== undefined ? { superuser: body.superuser } : {}), ...(body.roles ? { roles: [...body.roles] } : {}) });
    return { id, accepted: false };
  }

  async deleteApikey(id: number): Promise<void> {
    this.enter('deleteApikey', [id]);
    if (!this.keys.delete(id)) throw apiError('not_found');
  }
}

export function apiError(code: string): AmsyncError {
  return new AmsyncError(code, `fake ${code}`);
}

function secretOf(value: string): SecretValue {
  return { reveal: () => value, toString: () => '[redacted]', toJSON: () => '[redacted]' } as SecretValue;
}
