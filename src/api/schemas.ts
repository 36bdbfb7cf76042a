import { z } from 'zod';
import { Secret } from '../secrets/secret.js';
import type { ApiApikey, ApiSshUser, PageCursor } from './types.js';

// z.object drops keys it does not know: the service adds fields (created_at, ...) freely.
const timestamp = z.string().nullish().transform((value) => value ?? undefined);

export const apiSshUserSchema = z
  .object({
    id: z.number().int(),
    username: z.string(),
    level: z.string(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .transform(
    (raw): ApiSshUser => ({
      id: raw.id,
      username: raw.username,
      level: raw.level,
      ...(raw.created_at === undefined ? {} : { createdAt: raw.created_at }),
      ...(raw.updated_at === undefined ? {} : { updatedAt: raw.updated_at }),
    }),
  );

// Responses carry Role objects {id, name}; a bare id is accepted too, it means the same.
const roleSchema = z.union([z.object({ id: z.number().int() }).transform((role) => role.id), z.number().int()]);

export const apiApikeySchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    superuser: z.boolean(),
    roles: z.array(roleSchema),
    token: z.string().nullish(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .transform(
    (raw): ApiApikey => ({
      id: raw.id,
      name: raw.name,
      superuser: raw.superuser,
      roles: [...new Set(raw.roles)].sort((a, b) => a - b),
      token: typeof raw.token === 'string' ? new Secret(raw.token) : undefined,
      ...(raw.created_at === undefined ? {} : { createdAt: raw.created_at }),
      ...(raw.updated_at === undefined ? {} : { updatedAt: raw.updated_at }),
    }),
  );

const cursorValue = z.union([z.number(), z.string()]).nullable();

// `next` must be present: a page that does not say whether more follow cannot be trusted.
export const pageCursorSchema = z
  .object({ current: cursorValue.optional(), next: cursorValue, previous: cursorValue.optional() })
  .transform((raw): PageCursor => ({ current: raw.current ?? null, next: raw.next, previous: raw.previous ?? null }));

export const sshUserPageSchema = z.object({ cursor: pageCursorSchema, users: z.array(apiSshUserSchema) });
export const apikeyPageSchema = z.object({ cursor: pageCursorSchema, apikeys: z.array(apiApikeySchema) });

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
