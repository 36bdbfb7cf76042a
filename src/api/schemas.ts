import { z } from 'zod';
import { Secret } from '../secrets/secret.js';
import type { ApiApikey, ApiSshUser, PageCursor } from './types.js';

// z.object drops keys it does not know: the service adds fields (created_at, ...) freely.
//
// The wire shapes are checked without per-field transforms and converted by plain functions:
// in zod 4 each transform is a pipe with its own allocations, and a listing runs the item
// schema 100 times a page (at 100k items per kind, ~1 KB of garbage per item, measured in
// test/bench). Lists convert once per page.
const timestamp = z.string().nullish();

const wireSshUser = z.object({
  id: z.number().int(),
  username: z.string(),
  level: z.string(),
  created_at: timestamp,
  updated_at: timestamp,
});

// Responses carry Role objects {id, name}; a bare id is accepted too, it means the same.
const wireRole = z.union([z.object({ id: z.number().int() }), z.number().int()]);

const wireApikey = z.object({
  id: z.number().int(),
  name: z.string(),
  superuser: z.boolean(),
  roles: z.array(wireRole),
  token: z.string().nullish(),
  created_at: timestamp,
  updated_at: timestamp,
});

function toSshUser(raw: z.output<typeof wireSshUser>): ApiSshUser {
  return {
    id: raw.id,
    username: raw.username,
    level: raw.level,
    ...(raw.created_at == null ? {} : { createdAt: raw.created_at }),
    ...(raw.updated_at == null ? {} : { updatedAt: raw.updated_at }),
  };
}

function toApikey(raw: z.output<typeof wireApikey>): ApiApikey {
  return {
    id: raw.id,
    name: raw.name,
    superuser: raw.superuser,
    roles: [...new Set(raw.roles.map((role) => (typeof role === 'number' ? role : role.id)))].sort((a, b) => a - b),
    token: typeof raw.token === 'string' ? new Secret(raw.token) : undefined,
    ...(raw.created_at == null ? {} : { createdAt: raw.created_at }),
    ...(raw.updated_at == null ? {} : { updatedAt: raw.updated_at }),
  };
}

export const apiSshUserSchema = wireSshUser.transform(toSshUser);
export const apiApikeySchema = wireApikey.transform(toApikey);

const cursorValue = z.union([z.number(), z.string()]).nullable();

// `next` must be present: a page that does not say whether more follow cannot be trusted.
export const pageCursorSchema = z
  .object({ current: cursorValue.optional(), next: cursorValue, previous: cursorValue.optional() })
  .transform((raw): PageCursor => ({ current: raw.current ?? null, next: raw.next, previous: raw.previous ?? null }));

export const sshUserPageSchema = z
  .object({ cursor: pageCursorSchema, users: z.array(wireSshUser) })
  .transform((page) => ({ cursor: page.cursor, users: page.users.map(toSshUser) }));
export const apikeyPageSchema = z
  .object({ cursor: pageCursorSchema, apikeys: z.array(wireApikey) })
  .transform((page) => ({ cursor: page.cursor, apikeys: page.apikeys.map(toApikey) }));

// The error body (DESIGN.md §1); every part optional, since it is only used to explain.
export const serviceErrorBodySchema = z.object({
  errors: z.array(
    z.object({
      field: z.string().optional().catch(undefined),
      type: z.string().optional().catch(undefined),
      msg: z.string().optional().catch(undefined),
    }),
  ),
});
