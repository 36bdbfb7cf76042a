import * as z from 'zod';
import type { ActualOf, ActualSshUser, KindDeclaration, ListedApikey, SecretValue, ValueType } from '../model/index.js';
import { apikeyKind, sshUserKind, stateFieldsOf } from '../model/index.js';
import { Secret } from '../secrets/index.js';
import type { PageCursor } from './types.js';

// z.object drops keys it does not know: the service adds fields (created_at, ...) freely.
//
// The wire shapes derive from the kind declarations (model/kinds); they are checked without
// per-field transforms and converted by plain functions:
// in zod 4 each transform is a pipe with its own allocations, and a listing runs the item
// schema 100 times a page (at 100k items per kind, ~1 KB of garbage per item, measured in
// test/bench). Listed items go through precompiled checks first (below).

const timestamp = z.string().nullish();

// Responses carry Role objects {id, name}; a bare id is accepted too, it means the same.
const wireRole = z.union([z.object({ id: z.number().int() }), z.number().int()]);

/** Each listed value type on the wire (a write-only field is never listed). */
const wireValues: Record<Exclude<ValueType, 'secret'>, z.ZodType> = { text: z.string(), flag: z.boolean(), roleIds: z.array(wireRole) };

/**
 * A kind's item on the wire, from its declaration (model/kinds): the id, each listed field
 * under its wire name, the generated secret (the apikey token) when the kind has one, and the
 * timestamps. Output keys are the wire names.
 */
export function wireItem(kind: KindDeclaration) {
  const shape: Record<string, z.ZodType> = { id: z.number().int() };
  for (const [, field] of stateFieldsOf(kind)) shape[field.wire] = wireValues[field.type as Exclude<ValueType, 'secret'>];
  if (kind.generatedSecret !== undefined) shape[kind.generatedSecret] = z.string().nullish();
  return z.object({ ...shape, created_at: timestamp, updated_at: timestamp });
}

type Wire = Readonly<Record<string, unknown>> & { readonly id: number };

// Most keys have no roles: one shared empty list instead of one each (100k at 100k keys).
const noRoles: readonly number[] = Object.freeze([]);

function roleIds(roles: readonly ({ id: number } | number)[]): readonly number[] {
  if (roles.length === 0) return noRoles;
  const ids: number[] = [];
  for (const role of roles) ids.push(typeof role === 'number' ? role : role.id);
  // Nearly always already sorted and unique: then no Set and no sort.
  for (let i = 1; i < ids.length; i += 1) {
    if (!((ids[i - 1] as number) < (ids[i] as number))) return [...new Set(ids)].sort((a, b) => a - b);
  }
  return ids;
}

/**
 * The model's item, once: the id and listed fields (roles as sorted unique ids), the token as
 * a Secret; the timestamps and any field the service adds are dropped here.
 */
export function toItem<K extends KindDeclaration>(kind: K): (raw: Wire) => ActualOf<K> & { readonly token?: SecretValue } {
  // Plain arrays and an index loop: this runs for every listed item (100k per kind at scale).
  const names = stateFieldsOf(kind).map(([name]) => name as string);
  const wires = stateFieldsOf(kind).map(([, field]) => field.wire);
  const roles = stateFieldsOf(kind).map(([, field]) => field.type === 'roleIds');
  const secret = kind.generatedSecret;
  return (raw) => {
    const item: Record<string, unknown> = { id: raw.id };
    for (let i = 0; i < names.length; i += 1) {
      const value = raw[wires[i]!];
      item[names[i]!] = roles[i] ? roleIds(value as readonly ({ id: number } | number)[]) : value;
    }
    if (secret !== undefined && typeof raw[secret] === 'string') item.token = new Secret(raw[secret]);
    return item as ActualOf<K> & { readonly token?: SecretValue };
  };
}

const wireSshUser = wireItem(sshUserKind);
const wireApikey = wireItem(apikeyKind);
const toSshUser: (raw: Wire) => ActualSshUser = toItem(sshUserKind);
const toApikey: (raw: Wire) => ListedApikey = toItem(apikeyKind);

export const sshUserSchema = wireSshUser.transform((raw) => toSshUser(raw as Wire));
export const apikeySchema = wireApikey.transform((raw) => toApikey(raw as Wire));

// Precompiled checks of the item shapes, generated from the same declarations and run before
// zod on every listed item: each accepts only what the zod schema above accepts (a property
// test holds them to that), so an item they pass needs no zod run. An item they refuse goes to
// zod, which decides, and names the field when it is wrong.
//
// Why it stays (measured for issue 28: one page of 10,000 items parsed, JSON.parse included,
// median of 20 runs, 3 runs of that on a shared 2-core machine; JSON.parse alone 6.7 ms):
//   apikeys (two role objects each):  with this check 12.2–13.4 ms, zod alone 24.7–31.0 ms
//   SSH users:                         with this check  5.3–5.6 ms,  zod alone  8.3–12.7 ms
// The hand-written checks it replaced took 10.3 ms and 4.7 ms: the generated ones cost ~15 %
// more and are still about twice as fast as zod (zod allocates per key and per role union).
type Check = (value: unknown) => value is Wire;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isId = (value: unknown): value is number => Number.isSafeInteger(value);
const isTimestamp = (value: unknown): boolean => value === undefined || value === null || typeof value === 'string';

function isWireRoles(value: unknown): boolean {
  if (!Array.isArray(value)) return false;
  for (const role of value) if (!(isId(role) || (isRecord(role) && isId(role.id)))) return false;
  return true;
}

const valueChecks: Record<Exclude<ValueType, 'secret'>, (value: unknown) => boolean> = {
  text: (value) => typeof value === 'string',
  flag: (value) => typeof value === 'boolean',
  roleIds: isWireRoles,
};

export function checkOf(kind: KindDeclaration): Check {
  const wires = stateFieldsOf(kind).map(([, field]) => field.wire);
  const checks = stateFieldsOf(kind).map(([, field]) => valueChecks[field.type as Exclude<ValueType, 'secret'>]);
  const secret = kind.generatedSecret;
  return (value): value is Wire => {
    if (!isRecord(value) || !isId(value.id)) return false;
    for (let i = 0; i < wires.length; i += 1) if (!checks[i]!(value[wires[i]!])) return false;
    if (secret !== undefined && !isTimestamp(value[secret])) return false;
    return isTimestamp(value.created_at) && isTimestamp(value.updated_at);
  };
}

export const isWireSshUser: Check = checkOf(sshUserKind);
export const isWireApikey: Check = checkOf(apikeyKind);

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

function pageSchema<T>(key: string, wire: z.ZodType, check: Check, convert: (raw: Wire) => T) {
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
        items[i] = convert(parsed.data as Wire);
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

// The error body (as the real service does); every part optional, since it is only used to explain.
export const serviceErrorBodySchema = z.object({
  errors: z.array(
    z.object({
      field: z.string().optional().catch(undefined),
      type: z.string().optional().catch(undefined),
      msg: z.string().optional().catch(undefined),
    }),
  ),
});
