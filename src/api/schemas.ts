import * as z from 'zod';
import type { ActualSshUser, ListedApikey } from '../model/index.js';
import { Secret } from '../secrets/index.js';
import type { PageCursor } from './types.js';

// z.object drops keys it does not know: the service adds fields (created_at, ...) freely.
//
// The wire shapes are checked without per-field transforms and converted by plain functions:
// in zod 4 each transform is a pipe with its own allocations, and a listing runs the item
// schema 100 times a page (at 100k items per kind, ~1 KB of garbage per item, measured in
// test/bench). Listed items go through precompiled checks first (below).
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

type WireSshUser = z.output<typeof wireSshUser>;
type WireApikey = z.output<typeof wireApikey>;

// The model's types, once: the timestamps and any field the service adds are dropped here.
function toSshUser(raw: WireSshUser): ActualSshUser {
  return { id: raw.id, username: raw.username, level: raw.level };
}

// Most keys have no roles: one shared empty list instead of one each (100k at 100k keys).
const noRoles: readonly number[] = Object.freeze([]);

function roleIds(roles: WireApikey['roles']): readonly number[] {
  if (roles.length === 0) return noRoles;
  const ids: number[] = [];
  for (const role of roles) ids.push(typeof role === 'number' ? role : role.id);
  // Nearly always already sorted and unique: then no Set and no sort.
  for (let i = 1; i < ids.length; i += 1) {
    if (!((ids[i - 1] as number) < (ids[i] as number))) return [...new Set(ids)].sort((a, b) => a - b);
  }
  return ids;
}

function toApikey(raw: WireApikey): ListedApikey {
  const roles = roleIds(raw.roles);
  return typeof raw.token === 'string'
    ? { id: raw.id, name: raw.name, superuser: raw.superuser, roles, token: new Secret(raw.token) }
    : { id: raw.id, name: raw.name, superuser: raw.superuser, roles };
}

export const sshUserSchema = wireSshUser.transform(toSshUser);
export const apikeySchema = wireApikey.transform(toApikey);

// Precompiled checks of the item shapes, run before zod on every listed item: each accepts
// only what the zod schema above accepts (a property test holds them to that), so an item
// they pass needs no zod run. An item they refuse goes to zod, which decides, and names the
// field when it is wrong. A page of 100 items through zod cost ~10× the JSON.parse of it.
type Check<W> = (value: unknown) => value is W;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isId = (value: unknown): value is number => Number.isSafeInteger(value);
const isTimestamp = (value: unknown): boolean => value === undefined || value === null || typeof value === 'string';

export const isWireSshUser: Check<WireSshUser> = (value): value is WireSshUser =>
  isRecord(value) && isId(value.id) && typeof value.username === 'string' && typeof value.level === 'string' && isTimestamp(value.created_at) && isTimestamp(value.updated_at);

function isWireRoles(value: unknown): boolean {
  if (!Array.isArray(value)) return false;
  for (const role of value) if (!(isId(role) || (isRecord(role) && isId(role.id)))) return false;
  return true;
}

export const isWireApikey: Check<WireApikey> = (value): value is WireApikey =>
  isRecord(value) &&
  isId(value.id) &&
  typeof value.name === 'string' &&
  typeof value.superuser === 'boolean' &&
  isWireRoles(value.roles) &&
  (value.token === undefined || value.token === null || typeof value.token === 'string') &&
  isTimestamp(value.created_at) &&
  isTimestamp(value.updated_at);

const cursorValue = z.union([z.number(), z.string()]).nullable();

// `next` must be present: a page that does not say whether more follow cannot be trusted.
export const pageCursorSchema = z
  .object({ current: cursorValue.optional(), next: cursorValue, previous: cursorValue.optional() })
  .transform((raw): PageCursor => ({ current: raw.current ?? null, next: raw.next, previous: raw.previous ?? null }));

/**
 * A list page: zod checks the envelope once, each item goes through its precompiled check
 * (zod only for an item that check refuses) and is converted once. The items come out as
 * `items`, whatever the service calls them.
 */
// An array of anything: its items are checked below. (z.array(z.unknown()) runs a parse per item.)
const anyArray = z.custom<unknown[]>((value) => Array.isArray(value), { message: 'Invalid input: expected array' });

function pageSchema<W, T>(key: string, wire: z.ZodType<W>, check: Check<W>, convert: (raw: W) => T) {
  return z.object({ cursor: pageCursorSchema, [key]: anyArray }).transform((page, ctx) => {
    const raw = page[key] as unknown[];
    const items: T[] = new Array<T>(raw.length);
    for (let i = 0; i < raw.length; i += 1) {
      const item = raw[i];
      if (check(item)) {
        items[i] = convert(item);
        continue;
      }
      const parsed = wire.safeParse(item);
      if (parsed.success) {
        items[i] = convert(parsed.data);
        continue;
      }
      for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, path: [key, i, ...issue.path] } as Parameters<typeof ctx.addIssue>[0]);
      return z.NEVER;
    }
    return { cursor: page.cursor as PageCursor, items };
  });
}

export const sshUserPageSchema = pageSchema('users', wireSshUser, isWireSshUser, toSshUser);
export const apikeyPageSchema = pageSchema('apikeys', wireApikey, isWireApikey, toApikey);

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
