import { AmsyncError } from '../errors.js';

/** The longest data key a Secret may have (the API server's limit, as for a ConfigMap). */
export const maxSecretKeyLength = 253;

/** Kept as they are; every other byte of the name's UTF-8 becomes `_XX`. */
const plain = /[-.A-Za-z0-9]/;

/**
 * The Secret data key of an item name. A data key is `[-._a-zA-Z0-9]+`, at most 253
 * characters, and neither `.`, `..` nor starting with `..`. Letters, digits, `-` and `.` are
 * kept; every other byte of the name's UTF-8 (a space, `/`, `@`, a letter outside ASCII, and
 * `_` itself, the escape character) becomes `_` and two upper-case hex digits:
 * `CI deploy` -> `CI_20deploy`, `ci_deploy` -> `ci_5Fdeploy`. Because `_` is always escaped,
 * a key reads back as exactly one name (secretDataKeyName): two names never share a key, so
 * one item's secret can never overwrite another's. A leading `.` of `.`, `..` or `..x` is
 * escaped too (`_2E`), and the empty name is `_` (no escape ends there).
 */
export function secretDataKey(name: string): string {
  if (name === '') return '_';
  let out = '';
  for (const byte of Buffer.from(name, 'utf8')) {
    const ch = String.fromCharCode(byte);
    out += plain.test(ch) ? ch : `_${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  if (out === '.' || out.startsWith('..')) out = `_2E${out.slice(1)}`;
  return out;
}

/** What every generated password's data key starts with (passwordDataKey). */
export const passwordKeyPrefix = 'password__';

/**
 * The Secret data key of an SSH user's generated password: `password__` and the username's
 * data key (secretDataKey), `alice` -> `password__alice`, `a b` -> `password__a_20b`. An
 * apikey's data key never holds `__` (every `_` it has is followed by two hex digits), so no
 * apikey, whatever its name (`password__alice` is `password_5F_5Falice`), shares a data key
 * with a password, and two usernames never share one either.
 */
export function passwordDataKey(username: string): string {
  return `${passwordKeyPrefix}${secretDataKey(username)}`;
}

/** The item name a data key was made from (the inverse of secretDataKey); undefined for a key it never makes. */
export function secretDataKeyName(key: string): string | undefined {
  if (key === '_') return '';
  const bytes: number[] = [];
  for (let i = 0; i < key.length; i += 1) {
    const ch = key[i]!;
    if (ch !== '_') {
      if (!plain.test(ch)) return undefined;
      bytes.push(ch.charCodeAt(0));
      continue;
    }
    const hex = key.slice(i + 1, i + 3);
    if (!/^[0-9A-F]{2}$/.test(hex)) return undefined;
    bytes.push(parseInt(hex, 16));
    i += 2;
  }
  const name = Buffer.from(bytes).toString('utf8');
  return secretDataKey(name) === key ? name : undefined;
}

/** What a Secret's data key may be (the API server's rule for ConfigMap and Secret keys). */
const validKey = /^[-._a-zA-Z0-9]+$/;

/**
 * Why `key` cannot be a data key of a Secret, or undefined when it can: longer than 253
 * characters, a character outside `[-._a-zA-Z0-9]`, or `.`, `..` or starting with `..`. The
 * keys secretDataKey and passwordDataKey make can fail only the first.
 */
export function dataKeyProblem(key: string): string | undefined {
  if (key.length > maxSecretKeyLength) {
    return `its data key would be ${key.length} characters, past the ${maxSecretKeyLength} Kubernetes allows (each byte of the name other than a letter, a digit, - or . takes three, _XX)`;
  }
  if (key === '' || !validKey.test(key)) return 'its data key would hold a character outside [-._a-zA-Z0-9]';
  if (key === '.' || key.startsWith('..')) return 'its data key would be ., .. or start with ..';
  return undefined;
}

/** An item whose name makes a data key the Secret cannot have (dataKeyProblem): its secret cannot go to a Secret. */
export class SecretKeyTooLongError extends AmsyncError {
  constructor(problem: string, secret: string) {
    super('kube_secret_key', `${problem} in ${secret}; shorten the name; its secret was not written`);
    this.name = 'SecretKeyTooLongError';
  }
}
