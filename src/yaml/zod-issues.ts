import type { z } from 'zod';
import type { Diagnostic } from '../model/index.js';
import { describeExpected, describeValue, quote, rangeWords } from './describe-value.js';
import { diagnosticCodes } from '../model/index.js';
import { formatPath, type DocPath } from './doc-path.js';
import { limits } from './limits.js';
import { didYouMean } from './suggest.js';
import type { YamlSource } from './yaml-source.js';

export type Issue = z.core.$ZodIssue;

/** What a file kind adds to the generic wording of schema issues. */
export interface IssueWording {
  /** The schema the issues came from: it names the keys allowed at each path. */
  readonly schema: z.ZodType;
  /** What the whole file must be, for a document that is not a mapping. */
  readonly rootWhat: string;
  /** True under a path whose value must never be printed (a password). */
  isSensitive(path: DocPath): boolean;
  /** Extra words for an unknown key (e.g. a password on an apikey), instead of a suggestion. */
  unknownKeyHint?(parent: DocPath, key: string): string | undefined;
  /** A file-specific explanation of an issue (secret references); undefined = generic words. */
  explain?(issue: Issue, path: DocPath, value: unknown, describe: (issue: Issue) => Diagnostic[]): Diagnostic[] | undefined;
}

/** A string that reads as a number (`"7"`, `" -1.5 "`): most often a number put in quotes. */
export const numberInQuotes = /^\s*[-+]?\d+(\.\d+)?\s*$/;

/** zod issues -> positioned diagnostics in plain words, each with its path and a stable code. */
export function issuesToDiagnostics(issues: readonly Issue[], source: YamlSource, wording: IssueWording): Diagnostic[] {
  const describe = (issue: Issue): Diagnostic[] => {
    const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
    const value = valueAt(source.value, path);
    return wording.explain?.(issue, path, value, describe) ?? describeIssue(issue, path, value, source, wording);
  };
  // A hostile file can hold a million unknown keys; wording each would take minutes (and
  // locating a key is linear in its mapping), so stop at the limit.
  const out: Diagnostic[] = [];
  for (const issue of issues) {
    if (out.length >= limits.maxDiagnostics) break;
    const bounded = issue.code === 'unrecognized_keys' ? { ...issue, keys: issue.keys.slice(0, limits.maxDiagnostics - out.length) } : issue;
    out.push(...describe(bounded));
  }
  return out;
}

function describeIssue(issue: Issue, path: DocPath, value: unknown, source: YamlSource, wording: IssueWording): Diagnostic[] {
  const reveal = !wording.isSensitive(path);
  const make = (code: string, message: string, at: DocPath = path, target: 'value' | 'key' = 'value'): Diagnostic => ({
    severity: 'error',
    code,
    message,
    path: formatPath(at),
    position: source.locate(at, target),
  });

  switch (issue.code) {
    case 'unrecognized_keys': {
      const known = keysAt(wording.schema, path);
      return issue.keys.map((key) => {
        const hint = wording.unknownKeyHint?.(path, key);
        const tail = hint !== undefined ? ` — ${hint}` : didYouMean(key, known) || (known.length > 0 ? ` (known keys: ${known.join(', ')})` : '');
        return make(diagnosticCodes.unknownKey, `unknown key ${quote(key)}${tail}`, [...path, key], 'key');
      });
    }
    case 'invalid_type': {
      if (path.length === 0) {
        return [make(diagnosticCodes.notAMapping, `${wording.rootWhat}; found ${describeValue(value)}`)];
      }
      if (value === undefined) {
        const key = path[path.length - 1];
        return [make(diagnosticCodes.missingKey, `missing required key ${quote(String(key))}`)];
      }
      const whole = issue.expected === 'int' || (issue.expected === 'number' && wholeExpected(wording.schema, path));
      const expected = whole ? 'int' : issue.expected;
      return [make(diagnosticCodes.invalidType, `expected ${describeExpected(expected)}, got ${describeValue(value, reveal)}${typeHint(expected, value, path, source, reveal)}`)];
    }
    case 'invalid_value': {
      const options = issue.values.map((v) => quote(String(v)));
      const got = describeValue(value, reveal);
      const suggestion = typeof value === 'string' && reveal ? didYouMean(value, issue.values.map(String)) : '';
      return [make(diagnosticCodes.invalidValue, `expected ${options.length === 1 ? options[0] : `one of ${options.join(', ')}`}, got ${got}${suggestion}`)];
    }
    case 'too_small': {
      if (issue.origin === 'string' && Number(issue.minimum) <= 1) return [make(diagnosticCodes.outOfRange, 'must not be empty')];
      if (issue.origin === 'array') return [make(diagnosticCodes.outOfRange, `needs at least ${issue.minimum} item(s)`)];
      const kind = wholeExpected(wording.schema, path) ? 'int' : 'number';
      return [make(diagnosticCodes.outOfRange, `expected ${rangeWords(kind, Number(issue.minimum), issue.inclusive ?? true)}, got ${describeValue(value, reveal)}`)];
    }
    case 'too_big': {
      if (issue.origin === 'string') return [make(diagnosticCodes.outOfRange, `is too long (at most ${issue.maximum} characters)`)];
      return [make(diagnosticCodes.outOfRange, `expected at most ${issue.maximum}, got ${describeValue(value, reveal)}`)];
    }
    case 'invalid_union':
      return [make(diagnosticCodes.invalidType, `got ${describeValue(value, reveal)}, which matches none of the accepted forms`)];
    case 'invalid_format':
    case 'custom':
      // Schema-written messages; those that say what was expected also say what was found.
      return [make(diagnosticCodes.invalidValue, issue.message.startsWith('expected ') ? `${issue.message}, got ${describeValue(value, reveal)}` : issue.message)];
    default:
      return [make(diagnosticCodes.invalidValue, issue.message)];
  }
}

/** A follow-up for the most common type slips in YAML. */
function typeHint(expected: string, value: unknown, path: DocPath, source: YamlSource, reveal: boolean): string {
  if (!reveal) return '';
  if (expected === 'string' && (typeof value === 'number' || typeof value === 'boolean')) {
    const raw = source.rawText(path) ?? String(value);
    return ` — put it in quotes: "${raw}"`;
  }
  if (expected === 'boolean' && typeof value === 'string') {
    const lower = value.toLowerCase();
    if (['yes', 'y', 'on'].includes(lower)) return ' — YAML 1.2 reads yes/on as a string; write true';
    if (['no', 'n', 'off'].includes(lower)) return ' — YAML 1.2 reads no/off as a string; write false';
  }
  if ((expected === 'int' || expected === 'number') && typeof value === 'string' && numberInQuotes.test(value)) {
    return ' — remove the quotes';
  }
  if (expected === 'array' && value !== null && typeof value !== 'object') {
    return ` — write a list, e.g. [${typeof value === 'string' ? quote(value) : String(value)}]`;
  }
  return '';
}

export function valueAt(root: unknown, path: DocPath): unknown {
  let node = root;
  for (const segment of path) {
    if (node === null || typeof node !== 'object') return undefined;
    if (!Object.prototype.hasOwnProperty.call(node, segment)) return undefined;
    node = (node as Record<string | number, unknown>)[segment];
  }
  return node;
}

interface ZodLike {
  readonly _zod: { readonly def: ZodDef };
}

interface ZodDef {
  readonly type: string;
  readonly shape?: Record<string, ZodLike>;
  readonly element?: ZodLike;
  readonly innerType?: ZodLike;
  readonly options?: readonly ZodLike[];
  readonly in?: ZodLike;
  readonly format?: string;
  readonly checks?: readonly { readonly _zod: { readonly def: { readonly format?: string } } }[];
}

/** The schemas a path can lead to, unwrapping optional/nullable/default and unions. */
function schemasAt(schema: z.ZodType, path: DocPath): ZodLike[] {
  let current: ZodLike[] = [schema as unknown as ZodLike];
  for (const segment of [...path, undefined]) {
    const next: ZodLike[] = [];
    const stack = [...current];
    while (stack.length > 0) {
      const s = stack.pop()!;
      const def = s._zod.def;
      if (def.innerType) stack.push(def.innerType);
      else if (def.in) stack.push(def.in);
      else if (def.options) stack.push(...[...def.options].reverse()); // popped in declaration order
      else if (segment === undefined) next.push(s);
      else if (def.type === 'object' && typeof segment === 'string' && def.shape?.[segment]) next.push(def.shape[segment]);
      else if (def.type === 'array' && typeof segment === 'number' && def.element) next.push(def.element);
    }
    current = next;
  }
  return current;
}

/** Keys the schema allows in the mapping at `path`, in declaration order. */
export function keysAt(schema: z.ZodType, path: DocPath): string[] {
  const keys = new Set<string>();
  for (const s of schemasAt(schema, path)) {
    const shape = s._zod.def.shape;
    if (shape) for (const key of Object.keys(shape)) keys.add(key);
  }
  return [...keys];
}

/** Whether the number at `path` must be whole (so a bound reads "a whole number from 1"). */
function wholeExpected(schema: z.ZodType, path: DocPath): boolean {
  return schemasAt(schema, path).some((s) => s._zod.def.format === 'safeint' || (s._zod.def.checks?.some((c) => c._zod.def.format === 'safeint') ?? false));
}
