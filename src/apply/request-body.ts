import type { ApikeyChanges, BodyOf, ChangeOf, DesiredSshUser, FieldChangesOf, KindDeclaration, NewOf, SshUserChanges } from '../model/index.js';
import { apikeyKind, fieldsOf, identityOf, sshUserKind } from '../model/index.js';

/**
 * Builds a request body from a change, field by field in its kind's declaration (model/kinds).
 * Non-secret values come from the change itself (what was reviewed); a sensitive value (the
 * password) comes from the desired item, the only place a secret lives.
 */
export function bodyOf<K extends KindDeclaration>(kind: K, key: string, changed: FieldChangesOf<K>, item: object | undefined): BodyOf<K> {
  const fields = changed as Readonly<Record<string, { readonly after: unknown }>>;
  const declared = item as Readonly<Record<string, unknown>> | undefined;
  const body: Record<string, unknown> = {};
  for (const [name, field] of fieldsOf(kind)) {
    if (!(name in fields)) continue;
    if (field.sensitive) {
      const secret = declared?.[name];
      if (secret === undefined) throw new Error(`no ${name} declared for ${kind.noun} "${key}"`);
      body[name] = secret;
    } else {
      const after = fields[name]!.after;
      body[name] = Array.isArray(after) ? [...(after as unknown[])] : after;
    }
  }
  return body as BodyOf<K>;
}

/** A create's body: the identity is the change's key, a field the change leaves out takes its declared default. */
export function newOf<K extends KindDeclaration>(kind: K, key: string, body: BodyOf<K>): NewOf<K> {
  const given = body as Readonly<Record<string, unknown>>;
  const out: Record<string, unknown> = {};
  for (const [name, field] of fieldsOf(kind)) {
    const value = name === identityOf(kind) ? key : (given[name] ?? field.default);
    if (value !== undefined) out[name] = value;
  }
  return out as NewOf<K>;
}

export function sshUserBody(change: ChangeOf<'sshUser'>, item: DesiredSshUser | undefined): SshUserChanges {
  return bodyOf(sshUserKind, change.key, change.fields, item);
}

export function apikeyBody(change: ChangeOf<'apikey'>): ApikeyChanges {
  return bodyOf(apikeyKind, change.key, change.fields, undefined);
}

export const newSshUser = (key: string, body: SshUserChanges): NewOf<typeof sshUserKind> => newOf(sshUserKind, key, body);
export const newApikey = (key: string, body: ApikeyChanges): NewOf<typeof apikeyKind> => newOf(apikeyKind, key, body);
