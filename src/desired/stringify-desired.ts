import { relative } from 'node:path';
import type { DesiredApikey, DesiredSshUser, DesiredState, FieldDeclaration, KindDeclaration, SecretRef } from '../model/index.js';
import { apikeyKind, fieldsOf, sshUserKind } from '../model/index.js';

export interface StringifyDesiredOptions {
  /**
   * Folder the file will be written in: `{file: PATH}` references are written relative to it.
   * Without it they stay absolute.
   */
  readonly baseDir?: string;
  /** Adds `# yaml-language-server: $schema=<this>` as the first line. */
  readonly schemaUrl?: string;
  /**
   * Leaves out values equal to the file's defaults (`level: n1`, `superuser: false`,
   * `roles: []`): an export of 100k items stays well under the file size limit.
   * @default false
   */
  readonly omitDefaults?: boolean;
}

/**
 * DesiredState -> desired-state YAML that parses back to the same state. Passwords are
 * written as their references; a literal password is never written (it is left out, which
 * means "leave the existing password alone").
 */
export function stringifyDesired(state: DesiredState, options: StringifyDesiredOptions = {}): string {
  let text = '';
  for (const chunk of stringifyDesiredChunks(state, options)) text += chunk;
  return text;
}

// Items per chunk: a chunk is one write of an export, about 30 KB.
const itemsPerChunk = 1000;

/**
 * The same YAML as stringifyDesired, as a stream of chunks: written line by line in the style
 * yaml's own stringify gives these files (block lists of maps, short lists inline), without
 * building a document of nodes first (that was 29 % of an export's time, and a node per value).
 */
export function* stringifyDesiredChunks(state: DesiredState, options: StringifyDesiredOptions = {}): Generator<string, void, undefined> {
  let chunk = options.schemaUrl === undefined ? '' : `# yaml-language-server: $schema=${options.schemaUrl}\n\n`;
  const kinds: [string, readonly (DesiredSshUser | DesiredApikey)[], (item: never) => string][] = [
    ['sshUsers', state.sshUsers, (u: DesiredSshUser) => itemLines(sshUserKind, u, options)],
    ['apikeys', state.apikeys, (k: DesiredApikey) => itemLines(apikeyKind, k, options)],
  ];
  for (const [kind, items, lines] of kinds) {
    if (items.length === 0) {
      chunk += `${kind}: []\n`;
      continue;
    }
    chunk += `${kind}:\n`;
    for (let i = 0; i < items.length; i += 1) {
      chunk += (lines as (item: DesiredSshUser | DesiredApikey) => string)(items[i]!);
      if ((i + 1) % itemsPerChunk === 0) {
        yield chunk;
        chunk = '';
      }
    }
  }
  chunk += tailLines(state);
  if (chunk !== '') yield chunk;
}

/** One piece of the YAML stringifyDesiredPieces writes. */
export type DesiredPiece =
  /** Text outside the lists: the `$schema` line, `prune:` and `protect:`. */
  | { readonly kind: 'text'; readonly text: string }
  /** A list's key line: `sshUsers:`, or `sshUsers: []` when `empty`. */
  | { readonly kind: 'key'; readonly list: 'sshUsers' | 'apikeys'; readonly empty: boolean; readonly text: string }
  /** Up to 1,000 items of a list, and the text they are written as: `${list}:\n` + text is a document of them alone. */
  | { readonly kind: 'items'; readonly list: 'sshUsers'; readonly items: readonly DesiredSshUser[]; readonly text: string }
  | { readonly kind: 'items'; readonly list: 'apikeys'; readonly items: readonly DesiredApikey[]; readonly text: string };

/**
 * The same YAML as stringifyDesired, piece by piece, each list's items in pieces of at most
 * 1,000 with the items they hold: an export checks each piece it writes against its items
 * without the whole text in one string.
 */
export function* stringifyDesiredPieces(state: DesiredState, options: StringifyDesiredOptions = {}): Generator<DesiredPiece, void, undefined> {
  if (options.schemaUrl !== undefined) yield { kind: 'text', text: `# yaml-language-server: $schema=${options.schemaUrl}\n\n` };
  yield* listPieces('sshUsers', state.sshUsers, (u) => itemLines(sshUserKind, u, options));
  yield* listPieces('apikeys', state.apikeys, (k) => itemLines(apikeyKind, k, options));
  const tail = tailLines(state);
  if (tail !== '') yield { kind: 'text', text: tail };
}

function* listPieces<L extends 'sshUsers' | 'apikeys'>(
  list: L,
  items: readonly (L extends 'sshUsers' ? DesiredSshUser : DesiredApikey)[],
  lines: (item: L extends 'sshUsers' ? DesiredSshUser : DesiredApikey) => string,
): Generator<DesiredPiece, void, undefined> {
  yield { kind: 'key', list, empty: items.length === 0, text: items.length === 0 ? `${list}: []\n` : `${list}:\n` };
  for (let from = 0; from < items.length; from += itemsPerChunk) {
    const slice = items.slice(from, from + itemsPerChunk);
    let text = '';
    for (const item of slice) text += lines(item);
    yield { kind: 'items', list, items: slice, text } as DesiredPiece;
  }
}

function tailLines(state: DesiredState): string {
  let out = '';
  if (state.prune.sshUsers || state.prune.apikeys) out += `prune:\n  sshUsers: ${state.prune.sshUsers}\n  apikeys: ${state.prune.apikeys}\n`;
  if (state.protect.sshUsers.length > 0 || state.protect.apikeys.length > 0) {
    out += `protect:\n  sshUsers: ${flowList(state.protect.sshUsers.map(scalar))}\n  apikeys: ${flowList(state.protect.apikeys.map(scalar))}\n`;
  }
  return out;
}

/**
 * An item's lines, from its kind's declaration (model/kinds): the identity first, then `id`,
 * the other fields in declaration order (a value equal to its default left out under
 * omitDefaults), then `ensure: absent`. A write-only secret is written as its reference
 * (`<field>Ref`), never a literal; a roleIds field's roles by name (`roleNames`) come first.
 */
export function itemLines<K extends KindDeclaration>(kind: K, item: DesiredSshUser | DesiredApikey, options: StringifyDesiredOptions): string {
  const values = item as unknown as Readonly<Record<string, unknown>>;
  let out = '';
  for (const [name, field] of fieldsOf(kind)) {
    if (field.identity) {
      out += `  - ${name}: ${scalar(values[name] as string)}\n`;
      if (item.id !== undefined) out += `    id: ${item.id}\n`;
      continue;
    }
    const text = fieldText(field, values, name, options);
    if (text !== undefined) out += `    ${name}: ${text}\n`;
  }
  if (item.ensure === 'absent') out += '    ensure: absent\n';
  return out;
}

/** A field's value as written, or undefined to leave the key out. */
function fieldText(field: FieldDeclaration, values: Readonly<Record<string, unknown>>, name: string, options: StringifyDesiredOptions): string | undefined {
  const omit = (isDefault: boolean): boolean => options.omitDefaults === true && field.default !== undefined && isDefault;
  const value = values[name];
  switch (field.type) {
    case 'text':
      return omit(value === field.default) ? undefined : scalar(value as string);
    case 'flag':
      return omit(value === field.default) ? undefined : String(value);
    case 'roleIds': {
      // Roles by name first (export --role-names), then the ids without a unique name.
      const names = (values.roleNames as DesiredApikey['roleNames']) ?? [];
      const roles = [...names.map((r) => scalar(r.name)), ...(value as readonly number[]).map(String)];
      return omit(roles.length === 0) ? undefined : flowList(roles);
    }
    case 'secret': {
      const ref = values[`${name}Ref`] as SecretRef | undefined;
      return ref && ref.kind !== 'literal' ? writtenRef(ref, options.baseDir) : undefined;
    }
  }
}

function writtenRef(ref: Exclude<SecretRef, { kind: 'literal' }>, baseDir: string | undefined): string {
  if (ref.kind === 'env') return `{ env: ${scalar(ref.name)} }`;
  const path = baseDir === undefined ? ref.path : relative(baseDir, ref.path).split('\\').join('/');
  return `{ file: ${scalar(path)} }`;
}

const flowList = (items: readonly string[]): string => (items.length === 0 ? '[]' : `[ ${items.join(', ')} ]`);

// Plain where a plain scalar is a string in every YAML reader and context (block and flow):
// a letter or _ first, then no space, comma, bracket, brace, colon, # or quote; and no word
// that some reader takes for a boolean or null (YAML 1.1's yes/no/on/off included).
const plainSafe = /^[A-Za-z_][A-Za-z0-9_.@/-]*$/;
const reservedWords = new Set(['true', 'false', 'null', 'yes', 'no', 'on', 'off', 'y', 'n']);
// eslint-disable-next-line no-control-regex -- control characters are exactly what is looked for
const controlCharacters = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]/;

/**
 * A string as a YAML scalar: plain when that is safe; else double-quoted when that needs no
 * escape (as yaml writes "123"); else single-quoted (a ' doubled); and only a string with
 * control characters or line breaks as an escaped (JSON) string, which amsync's fast reader
 * leaves to the full one.
 */
function scalar(value: string): string {
  if (plainSafe.test(value) && !reservedWords.has(value.toLowerCase())) return value;
  if (controlCharacters.test(value)) return JSON.stringify(value);
  if (!value.includes('"') && !value.includes('\\')) return `"${value}"`;
  return `'${value.split("'").join("''")}'`;
}
