import type { ActualOf, ActualSshUser, ApikeyChanges, BodyOf, KindDeclaration, ListedApikey, NewApikey, NewSshUser, SecretValue, SshUserChanges } from '../model/index.js';
import { apikeyKind, fieldsOf, sshUserKind, stateFieldsOf } from '../model/index.js';
import { hashStart, hashText, hashValue } from './paginate.js';
import type { ResourceDefinition, WireBody } from './resource.js';
import { apikeyPageSchema, apikeySchema, sshUserPageSchema, sshUserSchema } from './schemas.js';

/** Serialises a body, revealing secrets here and only here, and lists them for scrubbing. */
function wire(fields: Record<string, unknown>): WireBody {
  const secrets: string[] = [];
  const plain: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    if (value !== null && typeof value === 'object' && 'reveal' in value && typeof value.reveal === 'function') {
      const revealed = (value as SecretValue).reveal();
      secrets.push(revealed);
      plain[key] = revealed;
    } else {
      plain[key] = value;
    }
  }
  return { json: JSON.stringify(plain), secrets };
}

/** A body's fields under their wire names, in the kind's declaration order (model/kinds). */
export function wireFields<K extends KindDeclaration>(kind: K, body: BodyOf<K>): Record<string, unknown> {
  const given = body as Readonly<Record<string, unknown>>;
  const out: Record<string, unknown> = {};
  for (const [name, field] of fieldsOf(kind)) {
    const value = given[name];
    out[field.wire] = Array.isArray(value) ? [...(value as unknown[])] : value;
  }
  return out;
}

/** The content two listings of one id must agree on: every listed field, hashed in declaration order. */
export function contentHash<K extends KindDeclaration>(kind: K, item: ActualOf<K>): number {
  const listed = item as unknown as Readonly<Record<string, unknown>>;
  let hash = hashStart;
  for (const [name, field] of stateFieldsOf(kind)) {
    const value = listed[name];
    if (field.type === 'text') hash = hashText(hash, value as string);
    else if (field.type === 'flag') hash = hashValue(hash, value as boolean);
    else if (field.type === 'roleIds') for (const id of value as readonly number[]) hash = hashValue(hash, id);
  }
  return hash;
}

export const sshUsers: ResourceDefinition<ActualSshUser, NewSshUser, SshUserChanges> = {
  kind: sshUserKind.kind,
  route: '/api/sshusers',
  itemSchema: sshUserSchema,
  pageSchema: sshUserPageSchema,
  idOf: (user) => user.id,
  contentOf: (user) => contentHash(sshUserKind, user),
  serialiseNew: (body) => wire(wireFields(sshUserKind, body)),
  serialiseChanges: (body) => wire(wireFields(sshUserKind, body)),
  createdOutcome: (user) => ({ id: user.id, accepted: false }),
};

export const apikeys: ResourceDefinition<ListedApikey, NewApikey, ApikeyChanges> = {
  kind: apikeyKind.kind,
  route: '/api/3rdparty/apikeys',
  itemSchema: apikeySchema,
  pageSchema: apikeyPageSchema,
  idOf: (apikey) => apikey.id,
  contentOf: (apikey) => contentHash(apikeyKind, apikey),
  serialiseNew: (body) => wire(wireFields(apikeyKind, body)),
  serialiseChanges: (body) => wire(wireFields(apikeyKind, body)),
  createdOutcome: (key) => ({ id: key.id, accepted: false, ...(key.token === undefined ? {} : { token: key.token }) }),
};
