import type { SourcePosition } from '../model/index.js';
import type { DocPath } from './doc-path.js';
import { limits } from './limits.js';
import { utf8Length, type YamlSource } from './yaml-source.js';

/**
 * Asked of a source read by readPlainYaml for a position it did not keep: the caller reads the
 * file again with readYaml, which has them all.
 */
export class PositionsNeeded extends Error {
  constructor() {
    super('this source keeps the positions of list items only');
    this.name = 'PositionsNeeded';
  }
}

/** Thrown inside the reader at the first thing outside the plain subset. */
class NotPlain extends Error {}

const notPlain = (): never => {
  throw new NotPlain();
};

/**
 * A fast reader for the plain YAML desired-state files are written in (and `amsync export`
 * writes): block mappings and sequences, one-line flow collections of scalars, plain and
 * one-line quoted scalars, comments. It builds no syntax tree and keeps only the value and
 * where each item of a top-level list and each top-level key starts, which is all a valid file
 * needs (DesiredSshUser.source, and where `prune:` or `policy:` is written).
 *
 * Why, beside `yaml` (readYaml in yaml-source.ts; added in d9d07cf for 100k-item files, used
 * for targets files since 2037a29). Measured at b0f91d5 with test/bench/fast-paths.ts yaml
 * (median and range of 7 runs, 2 cores shared with other work; docs/performance.md, "Fast
 * paths"), on a desired file of 100k users and 100k keys (6.8 MB):
 *
 * - CPU: 0.30 s (0.27–0.33) here, 7.5 s (7.2–8.7) in readYaml (yaml's Parser, Composer, toJS);
 * - heap the result keeps: 30 MB here, 218 MB for readYaml's value and Document;
 * - peak RSS of a process reading it: +36 MB here, +744 MB with readYaml;
 * - a 500-target targets file: 1.6 ms against 57 ms; a cold 10-line file (first read in a
 *   fresh process): 1.3 ms against 37–55 ms, because yaml is then not even loaded.
 *
 * Returns undefined, "not mine", for anything outside that subset (anchors, aliases, tags,
 * block scalars, multi-line scalars, escapes, nulls, numbers other than plain integers,
 * duplicate keys, tabs, directives, several documents ...): the caller then uses readYaml.
 * Inside, the reader throws NotPlain once to unwind from wherever it stopped; measured, a
 * decline costs 6–7 µs for a 2-line file against 31–63 µs for the readYaml that follows it
 * (on the large file with one anchor on its last line: 0.3 s against 7.5 s), so a result
 * threaded through every helper would buy nothing and cost readability. Where it returns a
 * value, it is the value readYaml (and yaml) gives: test/unit/yaml/plain-yaml.test.ts and
 * plain-yaml-differential.test.ts hold it to that, positions included. Any other position
 * throws PositionsNeeded: a file with something to report is read again with readYaml.
 */
export function readPlainYaml(text: string, file: string, maxBytes: number = limits.maxFileBytes): YamlSource | undefined {
  // What readYaml refuses or treats specially is left to it.
  if (utf8Length(text) > maxBytes || unusual.test(text)) return undefined;
  const reader = new PlainReader(text);
  let value: unknown;
  try {
    value = reader.document();
  } catch (error) {
    if (error instanceof NotPlain) return undefined;
    throw error;
  }
  const items = reader.items;
  const keys = reader.keys;
  return {
    file,
    value,
    locate(path: DocPath, at: 'value' | 'key' = 'value'): SourcePosition {
      const [key, index] = path;
      // A top-level key itself (`prune:`): where a section of the file is written.
      const top = path.length === 1 && at === 'key' && typeof key === 'string' ? keys.get(key) : undefined;
      if (top !== undefined) return { file, line: top[0], col: top[1] };
      const list = path.length === 2 && at === 'value' && typeof key === 'string' ? items.get(key) : undefined;
      if (list === undefined || typeof index !== 'number' || !(index >= 0 && 2 * index < list.length)) throw new PositionsNeeded();
      return { file, line: list[2 * index]!, col: list[2 * index + 1]! };
    },
    rawText(): string | undefined {
      throw new PositionsNeeded();
    },
  };
}

// Tabs (indentation rules), C0 controls and DEL (readYaml's binary check), CR not ending a
// line, byte-order marks and Unicode line separators.
// eslint-disable-next-line no-control-regex
const unusual = /[\u0000-\u0009\u000b\u000c\u000e-\u001f\u007f\u0085\u2028\u2029\ufeff]|\r(?!\n)/;
// The core schema's tests (yaml's schema/core/): a plain scalar matching one is not a string.
const coreNonString = [
  /^(?:~|[Nn]ull|NULL)?$/,
  /^[-+]?[0-9]+$/,
  /^0o[0-7]+$/,
  /^0x[0-9a-fA-F]+$/,
  /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/,
  /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/,
  /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/,
];
const plainInteger = /^(?:0|[1-9][0-9]{0,14})$/;
// YAML's indicators: a plain scalar may not start with one (`-` only before a space); in a
// flow collection the reader also ends plain scalars at these and at ':'.
const indicators = "-?:,[]{}#&*!|>'\"%@`";
const flowStops = ",[]{}#:'\"";

const SPACE = 0x20;
const HASH = 0x23;
const COLON = 0x3a;
const DASH = 0x2d;

/** A letter, digit or `_` (`digits`: digits allowed). */
function isKeyChar(c: number, digits: boolean): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f || (digits && c >= 0x30 && c <= 0x39);
}

/**
 * Reads line by line with offsets into the text, allocating little besides the value: a
 * 100k-item file must not cost more than the items themselves.
 */
class PlainReader {
  /** Per top-level key holding a block list: line and column of each item, interleaved. */
  readonly items = new Map<string, number[]>();
  /** Line and column of each top-level key. */
  readonly keys = new Map<string, [number, number]>();
  readonly #text: string;
  /** The current line: its number (1-based), first offset, end (before any CR) and next start. */
  #line = 0;
  #start = 0;
  #end = 0;
  #next = 0;
  /** Offset of the current line's first character that is not a space. */
  #first = 0;

  constructor(text: string) {
    this.#text = text;
  }

  document(): unknown {
    this.#seek(0, 1);
    if (!this.#skipBlank() || this.#indent() !== 0) notPlain();
    const value = this.#map(0, 1, -1, true);
    if (this.#skipBlank()) notPlain();
    return value;
  }

  #seek(start: number, line: number): void {
    const text = this.#text;
    this.#start = start;
    this.#line = line;
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    this.#next = end + 1;
    if (end > start && text.charCodeAt(end - 1) === 0x0d) end -= 1;
    this.#end = end;
    let first = start;
    while (first < end && text.charCodeAt(first) === SPACE) first += 1;
    this.#first = first;
    // Directives and document markers belong to readYaml.
    if (start < end && first === start) {
      const c = text.charCodeAt(start);
      if (c === 0x25 || text.startsWith('---', start) || text.startsWith('...', start)) notPlain();
    }
  }

  #advance(): void {
    this.#seek(this.#next, this.#line + 1);
  }

  #atEnd(): boolean {
    return this.#start > this.#text.length;
  }

  /** Moves to the next line with content (not blank, not only a comment); false at the end. */
  #skipBlank(): boolean {
    while (!this.#atEnd()) {
      if (this.#first < this.#end && this.#text.charCodeAt(this.#first) !== HASH) return true;
      if (this.#next > this.#text.length) {
        this.#start = this.#next;
        return false;
      }
      this.#advance();
    }
    return false;
  }

  #indent(): number {
    return this.#first - this.#start;
  }

  /** Whether a list item (`-` then a space or the end of the line) starts at `at`. */
  #isItem(at: number): boolean {
    return this.#text.charCodeAt(at) === DASH && (at + 1 === this.#end || this.#text.charCodeAt(at + 1) === SPACE);
  }

  /** A mapping key (`key:`, `"key":` or `'key':`) starting at `at`, or undefined. */
  #key(at: number): MapKey | undefined {
    return readKey(this.#text, at, this.#end, false);
  }

  /** A block node starting on the current line, indented by `indent`. */
  #block(indent: number, depth: number): unknown {
    if (depth > limits.maxDepth) notPlain();
    return this.#isItem(this.#first) ? this.#seq(indent, depth, undefined) : this.#map(indent, depth, -1, false);
  }

  /**
   * A block mapping whose keys sit at column `col` (0-based). `from`: where on the current
   * line its first key starts when that line is a list item's (`- key: value`), else -1.
   */
  #map(col: number, depth: number, from: number, top: boolean): Record<string, unknown> {
    const text = this.#text;
    const out: Record<string, unknown> = {};
    let at = from;
    for (;;) {
      if (at === -1) {
        if (!this.#skipBlank()) break;
        const indent = this.#indent();
        if (indent < col) break;
        if (indent > col) notPlain();
        at = this.#first;
      }
      const found = this.#key(at);
      if (found === undefined) {
        // A list item at the mapping's own column ends a mapping that is not a list item.
        if (from !== -1 || !this.#isItem(at)) notPlain();
        break;
      }
      const key = newKey(found.key, out);
      if (top) this.keys.set(key, [this.#line, at - this.#start + 1]);
      let rest = found.after;
      while (rest < this.#end && text.charCodeAt(rest) === SPACE) rest += 1;
      if (rest === this.#end || text.charCodeAt(rest) === HASH) {
        this.#advance();
        if (!this.#skipBlank()) notPlain();
        const indent = this.#indent();
        if (indent > col && !this.#isItem(this.#first) && this.#key(this.#first) === undefined) {
          // A scalar or a flow collection on a line of its own (`apikeys:\n  []`).
          out[key] = this.#inline(this.#first);
          this.#advance();
        } else if (indent > col) out[key] = top && this.#isItem(this.#first) ? this.#seq(indent, depth + 1, key) : this.#block(indent, depth + 1);
        else if (indent === col && this.#isItem(this.#first)) out[key] = this.#seq(col, depth + 1, top ? key : undefined);
        else notPlain();
      } else {
        out[key] = this.#inline(rest);
        this.#advance();
      }
      at = -1;
      from = -1;
    }
    return out;
  }

  /** A block sequence whose dashes sit at column `col`; `key`: the top-level key it is the value of. */
  #seq(col: number, depth: number, key: string | undefined): unknown[] {
    if (depth > limits.maxDepth) notPlain();
    const text = this.#text;
    const out: unknown[] = [];
    const positions: number[] = [];
    if (key !== undefined) this.items.set(key, positions);
    for (;;) {
      if (!this.#skipBlank()) break;
      const indent = this.#indent();
      if (indent < col) break;
      if (indent > col) notPlain();
      if (!this.#isItem(this.#first)) break;
      let content = this.#first + 1;
      while (content < this.#end && text.charCodeAt(content) === SPACE) content += 1;
      // An item whose content starts on the next line, or is itself a list: left to readYaml.
      if (content === this.#end || text.charCodeAt(content) === HASH || this.#isItem(content)) notPlain();
      positions.push(this.#line, content - this.#start + 1);
      if (this.#key(content) !== undefined) {
        out.push(this.#map(content - this.#start, depth + 1, content, false));
      } else {
        out.push(this.#inline(content));
        this.#advance();
      }
    }
    return out;
  }

  /** A value written on the rest of the current line from `at`: a scalar or a flow collection, then maybe a comment. */
  #inline(at: number): unknown {
    const text = this.#text;
    const end = this.#end;
    const c = text[at]!;
    let value: unknown;
    let after: number;
    if (c === '[' || c === '{') {
      const flow = new FlowReader(text, at, end);
      value = flow.collection();
      after = flow.at;
    } else if (c === '"' || c === "'") {
      [value, after] = quoted(text, at, end);
    } else {
      if (indicators.includes(c) && !(c === '-' && at + 1 < end && text.charCodeAt(at + 1) !== SPACE)) notPlain();
      // The scalar ends at ` #` (a comment); `: ` inside it would start a nested mapping.
      let stop = at;
      for (; stop < end; stop += 1) {
        const ch = text.charCodeAt(stop);
        if (ch === SPACE && text.charCodeAt(stop + 1) === HASH) break;
        if (ch === COLON && (stop + 1 === end || text.charCodeAt(stop + 1) === SPACE)) notPlain();
      }
      while (stop > at && text.charCodeAt(stop - 1) === SPACE) stop -= 1;
      return resolvePlain(text.slice(at, stop));
    }
    // After a quoted scalar or a flow collection: spaces, then the end or a comment.
    let rest = after;
    while (rest < end && text.charCodeAt(rest) === SPACE) rest += 1;
    if (rest < end && !(text.charCodeAt(rest) === HASH && rest > after)) notPlain();
    return value;
  }
}

/** `[a, b]` or `{k: v, ...}` closed on its line, of scalars only. */
class FlowReader {
  at: number;

  constructor(
    private readonly text: string,
    at: number,
    private readonly end: number,
  ) {
    this.at = at;
  }

  collection(): unknown[] | Record<string, unknown> {
    const { text } = this;
    const isList = text[this.at] === '[';
    const close = isList ? ']' : '}';
    const list: unknown[] = [];
    const map: Record<string, unknown> = {};
    this.at += 1;
    this.#spaces();
    if (text[this.at] === close) {
      this.at += 1;
      return isList ? list : map;
    }
    for (;;) {
      this.#spaces();
      if (isList) {
        list.push(this.#scalar());
      } else {
        const found = readKey(text, this.at, this.end, true) ?? notPlain();
        const key = newKey(found.key, map);
        this.at = found.after;
        this.#spaces();
        map[key] = this.#scalar();
      }
      this.#spaces();
      const next = this.at < this.end ? text[this.at] : undefined;
      this.at += 1;
      if (next === close) return isList ? list : map;
      if (next !== ',') notPlain();
      this.#spaces();
      if (text[this.at] === close) notPlain(); // a trailing comma
    }
  }

  #spaces(): void {
    while (this.at < this.end && this.text.charCodeAt(this.at) === SPACE) this.at += 1;
  }

  #scalar(): unknown {
    const { text } = this;
    if (this.at >= this.end) notPlain();
    const first = text[this.at]!;
    if (first === '"' || first === "'") {
      const [value, after] = quoted(text, this.at, this.end);
      this.at = after;
      return value;
    }
    if (indicators.includes(first)) notPlain();
    let stop = this.at;
    while (stop < this.end && !flowStops.includes(text[stop]!)) stop += 1;
    let last = stop;
    while (last > this.at && text.charCodeAt(last - 1) === SPACE) last -= 1;
    const value = resolvePlain(text.slice(this.at, last));
    this.at = stop;
    return value;
  }
}

/** A quoted scalar closed before `end`, double-quoted ones without escapes: [value, offset after it]. */
function quoted(text: string, at: number, end: number): [string, number] {
  const q = text[at]!;
  let out = '';
  let i = at + 1;
  for (;;) {
    let close = i;
    while (close < end && text[close] !== q) {
      if (q === '"' && text[close] === '\\') notPlain();
      close += 1;
    }
    if (close >= end) notPlain();
    out += text.slice(i, close);
    if (q === "'" && text[close + 1] === "'") {
      out += "'";
      i = close + 2;
      continue;
    }
    return [out, close + 1];
  }
}

interface MapKey {
  readonly key: string;
  /** Offset after the colon. */
  readonly after: number;
}

/**
 * A mapping key at `at`: an identifier that reads as a string (not `true` or `null`), or a
 * quoted string; then a colon and a space (or, outside a flow collection, the end of the line).
 */
function readKey(text: string, at: number, end: number, flow: boolean): MapKey | undefined {
  let key: string;
  let colon: number;
  const c = text[at];
  if (c === '"' || c === "'") {
    [key, colon] = quoted(text, at, end);
  } else {
    if (at >= end || !isKeyChar(text.charCodeAt(at), false)) return undefined;
    colon = at + 1;
    while (colon < end && isKeyChar(text.charCodeAt(colon), true)) colon += 1;
    key = text.slice(at, colon);
    if (text.charCodeAt(colon) === COLON && resolvePlain(key) !== key) notPlain();
  }
  if (text.charCodeAt(colon) !== COLON) return undefined;
  const after = colon + 1;
  if (after < end ? text.charCodeAt(after) !== SPACE : flow) return undefined;
  return { key, after };
}

/** A key not yet in `map` (duplicates are readYaml's to report). */
function newKey(key: string, map: Record<string, unknown>): string {
  if (key === '__proto__' || Object.hasOwn(map, key)) notPlain();
  return key;
}

/** A plain scalar under YAML 1.2's core schema; NotPlain for all but strings, booleans and plain integers. */
function resolvePlain(text: string): unknown {
  // Every non-string form of the core schema starts with one of these characters (or is empty).
  const c = text.charCodeAt(0);
  const maybeSpecial = text === '' || (c >= 0x30 && c <= 0x39) || c === 0x2b || c === DASH || c === 0x2e || c === 0x7e || 'nNtTfF'.includes(text[0]!);
  if (!maybeSpecial) return text;
  if (plainInteger.test(text)) return Number(text);
  if (text === 'true' || text === 'True' || text === 'TRUE') return true;
  if (text === 'false' || text === 'False' || text === 'FALSE') return false;
  if (coreNonString.some((pattern) => pattern.test(text))) notPlain();
  return text;
}
