import type { ApikeyChanges, Change, DesiredSshUser, SshUserChanges } from '../model/index.js';

/**
 * Builds a request body from a change. Non-secret values come from the change itself (what
 * was reviewed); the password comes from the desired item, the only place a secret lives.
 */
export function sshUserBody(change: Change, item: DesiredSshUser | undefined): SshUserChanges {
  const body: { username?: string; level?: string; password?: DesiredSshUser['password'] } = {};
  if ('username' in change.fields) body.username = String(change.fields.username!.after);
  if ('level' in change.fields) body.level = String(change.fields.level!.after);
  if ('password' in change.fields) {
    if (!item?.password) throw new Error(`no password declared for SSH user "${change.key}"`);
    body.password = item.password;
  }
  return body;
}

export function apikeyBody(change: Change): ApikeyChanges {
  const body: { name?: string; superuser?: boolean; roles?: number[] } = {};
  if ('name' in change.fields) body.name = String(change.fields.name!.after);
  if ('superuser' in change.fields) body.superuser = Boolean(change.fields.superuser!.after);
  if ('roles' in change.fields) body.roles = [...(change.fields.roles!.after as number[])];
  return body;
}

