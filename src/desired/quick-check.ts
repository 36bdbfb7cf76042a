import { envNamePattern } from '../secrets/index.js';
import type { DesiredFile } from './desired-schema.js';
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
 * Why by hand: a cold `amsync validate` spent ~35 ms of its ~130 ms in zod (loading it,
 * building the ~80 schemas of this file and compiling its parser on first use), and a
 * 200k-item plan ~0.2 s in its parse (docs/performance.md, "Cold start"). zod stays the
 * file's definition: the JSON Schema, the error messages and every file this declines.
 */
export function quickCheckDesired(raw: unknown): DesiredFile | undefined {
  try {
    return fileOf(raw);
  } catch (error) {
    if (error === notSure) return undefined;
    throw error;
  }
}

/** Thrown (and caught above) as soon as a value is outside the plainly right. */
const notSure: unique symbol = Symbol('not sure');

function decline(): never {
  throw notSure;
}

type Plain = Readonly<Record<string, unknown>>;

/** An object of data (as the YAML readers make them) with only `keys` (any, for labels); else not sure. */
function plainObject(value: unknown, keys: ReadonlySet<string> | 'any'): Plain {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return decline();
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return decline();
  if (keys !== 'any') for (const key of Object.keys(value)) if (!keys.has(key)) decline();
  // A key the object holds but does not list (a symbol, a non-enumerable one) is not data.
  if (Reflect.ownKeys(value).length !== Object.keys(value).length) decline();
  return value as Plain;
}

function list(value: unknown): readonly unknown[] {
  if (!Array.isArray(value) || Object.getPrototypeOf(value) !== Array.prototype) return decline();
  return value;
}

const text = (value: unknown): string => (typeof value === 'string' ? value : decline());
const nonEmpty = (value: unknown): string => (text(value).length >= 1 ? (value as string) : decline());
const bool = (value: unknown): boolean => (typeof value === 'boolean' ? value : decline());
const intAtLeast = (value: unknown, min: number): number => (typeof value === 'number' && Number.isSafeInteger(value) && value >= min ? value : decline());
const oneOf = <T extends string>(value: unknown, values: readonly T[]): T => ((values as readonly unknown[]).includes(value) ? (value as T) : decline());

/** A name that is its own identity: not empty, no spaces around it. */
const identity = (value: unknown): string => (nonEmpty(value).trim() === value ? (value as string) : decline());

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
  // zod's wording: "a number in quotes".
  return /^\s*[-+]?\d+(\.\d+)?\s*$/.test(name) ? decline() : name;
}

const roleRefs = (value: unknown): (number | string)[] => list(value).map(roleRef);

function password(value: unknown): string | { env: string } | { file: string } {
  if (typeof value === 'string') return value;
  const object = plainObject(value, passwordKeys);
  if (Object.keys(object).length !== 1) return decline();
  if (Object.hasOwn(object, 'env')) return envNamePattern.test(text(object.env)) ? { env: object.env as string } : decline();
  return { file: nonEmpty(object.file) };
}
const passwordKeys = new Set(['env', 'file']);

function targets(value: unknown): string[] | Record<string, string> {
  if (Array.isArray(value)) return list(value).map((name) => (targetNamePattern.test(text(name)) ? (name as string) : decline()));
  const labels = plainObject(value, 'any');
  const out: Record<string, string> = {};
  for (const [key, label] of Object.entries(labels)) {
    if (!labelKeyPattern.test(key) || !labelValuePattern.test(text(label))) decline();
    out[key] = label as string;
  }
  return out;
}

const ensureValues = ['present', 'absent'] as const;
const sshUserKeys = new Set(['username', 'id', 'level', 'password', 'ensure', 'targets']);

function sshUser(value: unknown): NonNullable<DesiredFile['sshUsers']>[number] {
  const user = plainObject(value, sshUserKeys);
  return {
    username: identity(user.username),
    ...optional(user, 'id', (id) => intAtLeast(id, 1)),
    level: withDefault(user, 'level', 'n1', nonEmpty),
    ...optional(user, 'password', password),
    ensure: withDefault(user, 'ensure', 'present', (e) => oneOf(e, ensureValues)),
    ...optional(user, 'targets', targets),
  };
}

const apikeyKeys = new Set(['name', 'id', 'superuser', 'roles', 'ensure', 'targets']);

function apikey(value: unknown): NonNullable<DesiredFile['apikeys']>[number] {
  const key = plainObject(value, apikeyKeys);
  return {
    name: identity(key.name),
    ...optional(key, 'id', (id) => intAtLeast(id, 1)),
    superuser: withDefault(key, 'superuser', false, bool),
    roles: withDefault(key, 'roles', [], roleRefs),
    ensure: withDefault(key, 'ensure', 'present', (e) => oneOf(e, ensureValues)),
    ...optional(key, 'targets', targets),
  };
}

const policyKeys = new Set(['superuser', 'forbiddenRoles', 'approveRoles', 'maxSuperuserKeys', 'usernamePattern', 'apikeyNamePattern', 'levels', 'approveDeletesOver']);
const superuserRules = ['allow', 'forbid', 'approve'] as const;

function policy(value: unknown): NonNullable<DesiredFile['policy']> {
  const p = plainObject(value, policyKeys);
  const levels = (v: unknown): string[] => {
    const out = list(v).map(nonEmpty);
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
const globs = (value: unknown): string[] => list(value).map(nonEmpty);

function prune(value: unknown): { sshUsers: boolean; apikeys: boolean } {
  const p = plainObject(value, kinds);
  return { sshUsers: withDefault(p, 'sshUsers', false, bool), apikeys: withDefault(p, 'apikeys', false, bool) };
}

function protect(value: unknown): { sshUsers: string[] | null; apikeys: string[] | null } {
  const p = plainObject(value, kinds);
  return { sshUsers: nullableWithDefault(p, 'sshUsers', [], globs), apikeys: nullableWithDefault(p, 'apikeys', [], globs) };
}

const fileKeys = new Set(['sshUsers', 'apikeys', 'prune', 'protect', 'policy', 'targets']);

function fileOf(raw: unknown): DesiredFile {
  const file = plainObject(raw, fileKeys);
  return {
    sshUsers: nullableWithDefault(file, 'sshUsers', [], (v) => list(v).map(sshUser)),
    apikeys: nullableWithDefault(file, 'apikeys', [], (v) => list(v).map(apikey)),
    prune: nullableWithDefault(file, 'prune', { sshUsers: false, apikeys: false }, prune),
    protect: nullableWithDefault(file, 'protect', { sshUsers: [], apikeys: [] }, protect),
    ...optional(file, 'policy', (p) => (p === null ? null : policy(p))),
    ...optional(file, 'targets', targets),
  };
}
