import { isProxy } from 'node:util/types';
import { envNamePattern } from '../secrets/index.js';
import { numberInQuotes } from '../yaml/index.js';
import type { FieldDeclaration, KindDeclaration } from '../model/index.js';
import { apikeyKind, expiresAtMs, fieldsOf, ignorableFieldsOf, sshUserKind, ttlMs } from '../model/index.js';
import type { DesiredFile, FileItemOf } from './desired-schema.js';
import { noOuterSpaces } from './name-rules.js';
import { labelKeyPattern, labelValuePattern, targetNamePattern } from './target-selector.js';

/**
 * The common case of the desired-file schema, checked without zod: a file that is plainly
 * right. It answers exactly what `desiredFileSchema().parse(raw)` would (defaults filled in,
 * new objects and lists), or undefined, "not sure", for anything else: a wrong type, an
 * unknown key, a bad value, an unusual object. Then the caller asks zod, which finds and words
 * the errors. So it never decides that a file is wrong, and it may accept a file only where
 * zod accepts it with the same value: test/unit/desired/quick-check.test.ts compares the two
 * on generated files, valid and broken.
 *
 * Why it stays (measured again for issue 28, built CLI, `amsync validate`, wall time, medians,
 * runs alternated on a shared 2-core machine): a 40-item file 124 ms with it, 138 ms without
 * (n=30; zod builds the ~80 schemas of this file and compiles its parser on first use, ~10 ms);
 * a 100k-item file (5 MB) 705 ms with it, 675 ms without (n=6: warm, zod 4's compiled parser
 * is the faster one, ~34 ms against ~49 ms at 20k items). Most runs (CI, validate, a sync)
 * read small files cold, where it saves ~10 %; at 100k items it cost ~4 %, so a file of more than
 * quickCheckMaxItems items goes to zod straight away. Its key sets and
 * field checks are generated from the kind declarations (model/kinds), as the zod schema is.
 * zod stays the file's definition: the JSON Schema, the error messages and every file this declines.
 */
export function quickCheckDesired(raw: unknown): DesiredFile | undefined {
  if (prototypeAltered() || itemCount(raw) > quickCheckMaxItems) return undefined;
  try {
    return fileOf(raw);
  } catch (error) {
    if (error === notSure) return undefined;
    throw error;
  }
}

/**
 * Above this many items zod takes the file: its compiled object check is the faster one on a
 * large file (warm: ~34 ms against ~49 ms at 20k items; docs/performance.md, "Fast paths"),
 * and its ~10 ms first-use cost no longer matters there. Below it, a cold run saves that cost.
 */
export const quickCheckMaxItems = 1000;

function itemCount(raw: unknown): number {
  if (typeof raw !== 'object' || raw === null) return 0;
  const { sshUsers, apikeys } = raw as { sshUsers?: unknown; apikeys?: unknown };
  return (Array.isArray(sshUsers) ? sshUsers.length : 0) + (Array.isArray(apikeys) ? apikeys.length : 0);
}

/** Thrown (and caught above) as soon as a value is outside the plainly right. */
const notSure: unique symbol = Symbol('not sure');

function decline(): never {
  throw notSure;
}

type Plain = Readonly<Record<string, unknown>>;

/**
 * Whether Object.prototype holds a key zod would see: zod tests an optional key with `in`
 * (inherited ones too) and refuses unknown keys with `for...in` (inherited enumerable ones
 * too); this reads own keys only. Checked once per file.
 */
function prototypeAltered(): boolean {
  if (Object.keys(Object.prototype).length > 0) return true;
  for (const key of allKeys) if (key in Object.prototype) return true;
  return false;
}

/**
 * An object of data (as the YAML readers make them) with only `keys` (any, for labels); else
 * not sure. Data means each value reads the same every time: no getter, no proxy, nothing but
 * enumerable own string keys.
 */
function plainObject(value: unknown, keys: ReadonlySet<string> | 'any'): Plain {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || isProxy(value)) return decline();
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return decline();
  for (const key of Reflect.ownKeys(value)) {
    const property = Object.getOwnPropertyDescriptor(value, key)!;
    if (typeof key !== 'string' || !property.enumerable || !('value' in property)) decline();
    if (keys !== 'any' && !keys.has(key)) decline();
  }
  return value as Plain;
}

/** Each element mapped, holes included (a hole reads as undefined and is declined, as zod refuses it). */
function listOf<T>(value: unknown, item: (element: unknown) => T): T[] {
  if (!Array.isArray(value) || isProxy(value) || Object.getPrototypeOf(value) !== Array.prototype) return decline();
  const out = new Array<T>(value.length);
  for (let i = 0; i < value.length; i += 1) out[i] = item((value as unknown[])[i]);
  return out;
}

const text = (value: unknown): string => (typeof value === 'string' ? value : decline());
const nonEmpty = (value: unknown): string => (text(value).length >= 1 ? (value as string) : decline());
const bool = (value: unknown): boolean => (typeof value === 'boolean' ? value : decline());
const intAtLeast = (value: unknown, min: number): number => (typeof value === 'number' && Number.isSafeInteger(value) && value >= min ? value : decline());
const oneOf = <T extends string>(value: unknown, values: readonly T[]): T => ((values as readonly unknown[]).includes(value) ? (value as T) : decline());

/** A name that is its own identity: not empty, no spaces around it. */
const identity = (value: unknown): string => (noOuterSpaces(nonEmpty(value)) ? (value as string) : decline());

/** Each present key's value, mapped; absent keys stay absent (as zod's optional keys do). */
function optional<T>(object: Plain, key: string, map: (value: unknown) => T): { [key: string]: T } {
  return Object.hasOwn(object, key) ? { [key]: map(object[key]) } : {};
}

const withDefault = <T>(object: Plain, key: string, fallback: T, map: (value: unknown) => T): T => (object[key] === undefined ? fallback : map(object[key]));

/** `x: null` stays null; absent takes the default. */
const nullableWithDefault = <T>(object: Plain, key: string, fallback: T, map: (value: unknown) => T): T | null => (object[key] === null ? null : withDefault(object, key, fallback, map));

function roleRef(value: unknown): number | string {
  if (typeof value === 'number') return intAtLeast(value, 1);
  const name = identity(value);
  return numberInQuotes.test(name) ? decline() : name;
}

const roleRefs = (value: unknown): (number | string)[] => listOf(value, roleRef);

function password(value: unknown): string | { env: string } | { file: string } {
  if (typeof value === 'string') return value;
  const object = plainObject(value, passwordKeys);
  if (Object.keys(object).length !== 1) return decline();
  if (Object.hasOwn(object, 'env')) {
    const env = text(object.env);
    return envNamePattern.test(env) ? { env } : decline();
  }
  return { file: nonEmpty(object.file) };
}
const passwordKeys = new Set(['env', 'file']);

function targets(value: unknown): string[] | Record<string, string> {
  if (Array.isArray(value)) return listOf(value, (name) => (targetNamePattern.test(text(name)) ? (name as string) : decline()));
  const labels = plainObject(value, 'any');
  const out: Record<string, string> = {};
  for (const [key, label] of Object.entries(labels)) {
    if (!labelKeyPattern.test(key) || !labelValuePattern.test(text(label))) decline();
    out[key] = label as string;
  }
  return out;
}

const ensureValues = ['present', 'absent'] as const;
// The pieces the schema shares between the two kinds (its `Shared`).
const pinnedId = (object: Plain) => optional(object, 'id', (id) => intAtLeast(id, 1));
const ensure = (object: Plain) => withDefault(object, 'ensure', 'present', (e) => oneOf(e, ensureValues));

/** A field's check by its declaration, as desired-schema.ts's fieldSchema builds it for zod. */
function fieldCheck(field: FieldDeclaration): (item: Plain, name: string) => unknown {
  if (field.identity) return (item, name) => identity(item[name]);
  if (field.type === 'secret') return (item, name) => (Object.hasOwn(item, name) ? password(item[name]) : undefined);
  const check = field.type === 'text' ? nonEmpty : field.type === 'flag' ? bool : roleRefs;
  const fallback = field.default;
  if (fallback === undefined) return (item, name) => check(item[name]);
  // A list default is a new list for each item, as a literal in the schema was.
  if (Array.isArray(fallback)) return (item, name) => withDefault(item, name, [] as unknown[], check as (v: unknown) => unknown[]);
  return (item, name) => withDefault(item, name, fallback as unknown, check);
}

/** `renamedFrom:`: at least one name, each as an identity is written. */
const formerNames = (value: unknown): string[] => {
  const names = listOf(value, identity);
  return names.length >= 1 ? names : decline();
};

/** `ignore:` of a kind: names of its ignorable fields (model/kinds), as desired-schema.ts's enum. */
const ignoreOf = (kind: KindDeclaration) => {
  const allowed = ignorableFieldsOf(kind) as readonly string[];
  return (value: unknown): string[] => listOf(value, (name) => oneOf(name, allowed));
};
const modes = ['observe'] as const;

/** `expires:` and `ttl:`, as the schema's refinements (model/expiry.ts decides both). */
const expiresText = (value: unknown): string => (typeof value === 'string' && expiresAtMs(value) !== undefined ? value : decline());
const ttlText = (value: unknown): string => (typeof value === 'string' && ttlMs(value) !== undefined ? value : decline());

/**
 * A kind's item check, its keys generated from the kind's declaration (model/kinds): the
 * fields, `id` after the identity, `ensure` and `targets`, as desired-schema.ts's itemSchema.
 */
export function itemCheck<K extends KindDeclaration>(kind: K): { keys: ReadonlySet<string>; check: (value: unknown) => FileItemOf<K> } {
  const fields = fieldsOf(kind).map(([name, field]) => [name as string, fieldCheck(field), field.identity === true] as const);
  const keys = new Set<string>();
  for (const [name, , isIdentity] of fields) {
    keys.add(name);
    if (isIdentity) keys.add('id');
  }
  keys.add('ensure');
  keys.add('targets');
  for (const control of ['renamedFrom', 'ignore', 'mode', 'expires', 'ttl']) keys.add(control);
  const ignore = ignoreOf(kind);
  const check = (value: unknown): FileItemOf<K> => {
    const item = plainObject(value, keys);
    const out: Record<string, unknown> = {};
    for (const [name, checkField, isIdentity] of fields) {
      const checked = checkField(item, name);
      if (checked !== undefined) out[name] = checked;
      if (isIdentity) Object.assign(out, pinnedId(item));
    }
    out.ensure = ensure(item);
    Object.assign(out, optional(item, 'targets', targets));
    Object.assign(out, optional(item, 'renamedFrom', formerNames), optional(item, 'ignore', ignore), optional(item, 'mode', (m) => oneOf(m, modes)));
    Object.assign(out, optional(item, 'expires', expiresText), optional(item, 'ttl', ttlText));
    return out as FileItemOf<K>;
  };
  return { keys, check };
}

const sshUsers = itemCheck(sshUserKind);
const apikeys = itemCheck(apikeyKind);
const sshUser = sshUsers.check;
const apikey = apikeys.check;

const policyKeys = new Set(['superuser', 'forbiddenRoles', 'approveRoles', 'maxSuperuserKeys', 'usernamePattern', 'apikeyNamePattern', 'levels', 'approveDeletesOver']);
const superuserRules = ['allow', 'forbid', 'approve'] as const;

function policy(value: unknown): NonNullable<DesiredFile['policy']> {
  const p = plainObject(value, policyKeys);
  const levels = (v: unknown): string[] => {
    const out = listOf(v, nonEmpty);
    return out.length >= 1 ? out : decline();
  };
  return {
    superuser: withDefault(p, 'superuser', 'approve', (s) => oneOf(s, superuserRules)),
    forbiddenRoles: withDefault(p, 'forbiddenRoles', [], roleRefs),
    approveRoles: withDefault(p, 'approveRoles', [], roleRefs),
    ...optional(p, 'maxSuperuserKeys', (n) => intAtLeast(n, 0)),
    ...optional(p, 'usernamePattern', nonEmpty),
    ...optional(p, 'apikeyNamePattern', nonEmpty),
    ...optional(p, 'levels', levels),
    ...optional(p, 'approveDeletesOver', (n) => intAtLeast(n, 0)),
  };
}

const kinds = new Set(['sshUsers', 'apikeys']);
const globs = (value: unknown): string[] => listOf(value, nonEmpty);

function prune(value: unknown): { sshUsers: boolean; apikeys: boolean } {
  const p = plainObject(value, kinds);
  return { sshUsers: withDefault(p, 'sshUsers', false, bool), apikeys: withDefault(p, 'apikeys', false, bool) };
}

function protect(value: unknown): { sshUsers: string[] | null; apikeys: string[] | null } {
  const p = plainObject(value, kinds);
  return { sshUsers: nullableWithDefault(p, 'sshUsers', [], globs), apikeys: nullableWithDefault(p, 'apikeys', [], globs) };
}

const ignoreSshUsers = ignoreOf(sshUserKind);
const ignoreApikeys = ignoreOf(apikeyKind);

/** The top-level `ignore:`: each kind's list optional (no default), as in the schema. */
function ignoreByKind(value: unknown): { sshUsers?: string[]; apikeys?: string[] } {
  const p = plainObject(value, kinds);
  return { ...optional(p, 'sshUsers', ignoreSshUsers), ...optional(p, 'apikeys', ignoreApikeys) };
}

const fileKeys = new Set(['sshUsers', 'apikeys', 'prune', 'protect', 'policy', 'targets', 'ignore']);
const allKeys = [...fileKeys, ...sshUsers.keys, ...apikeys.keys, ...policyKeys, ...kinds, ...passwordKeys];

function fileOf(raw: unknown): DesiredFile {
  const file = plainObject(raw, fileKeys);
  return {
    sshUsers: nullableWithDefault(file, 'sshUsers', [], (v) => listOf(v, sshUser)),
    apikeys: nullableWithDefault(file, 'apikeys', [], (v) => listOf(v, apikey)),
    prune: nullableWithDefault(file, 'prune', { sshUsers: false, apikeys: false }, prune),
    protect: nullableWithDefault(file, 'protect', { sshUsers: [], apikeys: [] }, protect),
    ...optional(file, 'policy', (p) => (p === null ? null : policy(p))),
    ...optional(file, 'targets', targets),
    ...optional(file, 'ignore', ignoreByKind),
  };
}
