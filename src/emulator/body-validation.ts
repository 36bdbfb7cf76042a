import type { FieldError } from './types.js';

/**
 * Checks of request bodies, written by hand rather than with zod because the answer is the
 * service's own error body: every wrong field gets one `{field, type, msg}` entry.
 */

export type Checked<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] };

/** The only level the service documents (the service's API specification: "The only value used is `n1`"). */
export const LEVELS: readonly string[] = ['n1'];

export interface SshUserInput {
  username?: string;
  level?: string;
  password?: string;
}

export interface ApikeyInput {
  name?: string;
  superuser?: boolean;
  roles?: number[];
}

type Mode = 'create' | 'update';

export function checkSshUserBody(body: unknown, mode: Mode, levels: readonly string[] = LEVELS): Checked<SshUserInput> {
  const errors: FieldError[] = [];
  const obj = asObject(body, errors);
  if (obj === null) return { ok: false, errors };
  const value: SshUserInput = {};
  const username = stringField(obj, 'username', mode === 'create', errors);
  if (username !== undefined) value.username = username;
  const level = stringField(obj, 'level', mode === 'create', errors);
  if (level !== undefined) {
    if (levels.includes(level)) value.level = level;
    else errors.push({ field: 'level', type: 'invalid', msg: `level must be one of: ${levels.join(', ')}; got '${level}'` });
  }
  const password = stringField(obj, 'password', mode === 'create', errors);
  if (password !== undefined) value.password = password;
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value };
}

export function checkApikeyBody(body: unknown, mode: Mode, roleExists: (id: number) => boolean): Checked<ApikeyInput> {
  const errors: FieldError[] = [];
  const obj = asObject(body, errors);
  if (obj === null) return { ok: false, errors };
  const value: ApikeyInput = {};
  const name = stringField(obj, 'name', mode === 'create', errors);
  if (name !== undefined) value.name = name;
  if (obj.superuser !== undefined) {
    if (typeof obj.superuser === 'boolean') value.superuser = obj.superuser;
    else errors.push({ field: 'superuser', type: 'invalid', msg: 'superuser must be a boolean' });
  }
  if (obj.roles !== undefined) {
    const roles = rolesField(obj.roles, roleExists, errors);
    if (roles !== undefined) value.roles = roles;
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value };
}

function asObject(body: unknown, errors: FieldError[]): Record<string, unknown> | null {
  if (body === undefined) {
    errors.push({ field: 'body', type: 'required', msg: 'a JSON object body is required' });
    return null;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    errors.push({ field: 'body', type: 'invalid', msg: 'the body must be a JSON object' });
    return null;
  }
  return body as Record<string, unknown>;
}

function stringField(obj: Record<string, unknown>, field: string, required: boolean, errors: FieldError[]): string | undefined {
  const raw = obj[field];
  if (raw === undefined) {
    if (required) errors.push({ field, type: 'required', msg: `${field} is required` });
    return undefined;
  }
  if (typeof raw !== 'string') {
    errors.push({ field, type: 'invalid', msg: `${field} must be a string` });
    return undefined;
  }
  if (raw.length === 0) {
    errors.push({ field, type: 'required', msg: `${field} must not be empty` });
    return undefined;
  }
  return raw;
}

function rolesField(raw: unknown, roleExists: (id: number) => boolean, errors: FieldError[]): number[] | undefined {
  if (!Array.isArray(raw)) {
    errors.push({ field: 'roles', type: 'invalid', msg: 'roles must be an array of role ids' });
    return undefined;
  }
  const ids: number[] = [];
  let bad = false;
  for (const [i, id] of raw.entries()) {
    if (typeof id !== 'number' || !Number.isSafeInteger(id)) {
      errors.push({ field: 'roles', type: 'invalid', msg: `roles[${i}] must be an integer role id` });
      bad = true;
    } else if (!roleExists(id)) {
      errors.push({ field: 'roles', type: 'not_found', msg: `roles[${i}]: role ${id} does not exist` });
      bad = true;
    } else if (!ids.includes(id)) {
      ids.push(id);
    }
  }
  return bad ? undefined : ids;
}
