import type { ActualApikey, ActualSshUser, ActualState, Change, DesiredState, Plan } from '../../src/model/index.js';

/**
 * Applies a plan to an in-memory copy of the service with the service's rules (unique
 * usernames, ids assigned by the service), in amsync's order: updates, creates, deletes.
 * Returns the new state and the ids of password fingerprints that were applied.
 */
export function applyInMemory(actual: ActualState, plan: Plan, desired: DesiredState, nextId: () => number): { state: ActualState; passwordsSet: Map<string, string> } {
  const users = new Map<number, ActualSshUser>(actual.sshUsers.map((u) => [u.id, u]));
  const keys = new Map<number, ActualApikey>(actual.apikeys.map((k) => [k.id, k]));
  const passwordsSet = new Map<string, string>();
  const order = { update: 0, create: 1, delete: 2 } as const;
  let pending = [...plan.changes].sort((a, b) => order[a.action] - order[b.action]);
  // Like the apply step: a change refused with 409 is tried again in a later round, after
  // the others (a rename onto a name another rename frees). Bounded: stops without progress.
  while (pending.length > 0) {
    const failed: Change[] = [];
    for (const c of pending) {
      try {
        if (c.kind === 'sshUser') applyUser(c, users, desired, nextId, passwordsSet);
        else applyKey(c, keys, nextId);
      } catch {
        failed.push(c);
      }
    }
    if (failed.length === pending.length) break;
    pending = failed;
  }
  return { state: { sshUsers: [...users.values()], apikeys: [...keys.values()] }, passwordsSet };
}

function after(c: Change, field: string): unknown {
  return c.fields[field]?.after;
}

function applyUser(c: Change, users: Map<number, ActualSshUser>, desired: DesiredState, nextId: () => number, passwordsSet: Map<string, string>): void {
  const taken = (name: string, except?: number) => [...users.values()].some((u) => u.username === name && u.id !== except);
  if (c.action === 'delete') {
    users.delete(c.id!);
    return;
  }
  if (c.action === 'create') {
    if (taken(c.key)) throw new Error(`409: username ${c.key} taken`);
    const id = nextId();
    users.set(id, { id, username: c.key, level: String(after(c, 'level')) });
    passwordsSet.set(String(id), c.key);
    return;
  }
  const current = users.get(c.id!)!;
  const username = (after(c, 'username') as string | undefined) ?? current.username;
  if (taken(username, current.id)) throw new Error(`409: username ${username} taken`);
  users.set(current.id, { ...current, username, level: (after(c, 'level') as string | undefined) ?? current.level });
  if (c.fields.password) passwordsSet.set(String(current.id), c.key);
  void desired;
}

function applyKey(c: Change, keys: Map<number, ActualApikey>, nextId: () => number): void {
  if (c.action === 'delete') {
    keys.delete(c.id!);
    return;
  }
  if (c.action === 'create') {
    const id = nextId();
    keys.set(id, { id, name: c.key, superuser: after(c, 'superuser') as boolean, roles: after(c, 'roles') as number[] });
    return;
  }
  const current = keys.get(c.id!)!;
  keys.set(current.id, {
    ...current,
    name: (after(c, 'name') as string | undefined) ?? current.name,
    superuser: (after(c, 'superuser') as boolean | undefined) ?? current.superuser,
    roles: (after(c, 'roles') as number[] | undefined) ?? current.roles,
  });
}
