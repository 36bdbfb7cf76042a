/**
 * A parser for the JavaScript regular expressions picomatch makes from globs (no flags, the
 * web-compatible syntax of Annex B), into a small tree that regex-program.ts compiles for a
 * matcher without backtracking. The source has already been accepted by `new RegExp`, so the
 * parser reads valid syntax only; what it cannot match in linear time (back-references) it
 * refuses with UnsupportedRegexError.
 */

/** A set of UTF-16 code units: sorted, disjoint inclusive ranges, possibly complemented. */
export interface CharSet {
  readonly ranges: readonly (readonly [number, number])[];
  readonly negate: boolean;
}

export type RegexNode =
  | { readonly type: 'empty' }
  | { readonly type: 'chars'; readonly set: CharSet }
  | { readonly type: 'seq'; readonly items: readonly RegexNode[] }
  | { readonly type: 'alt'; readonly options: readonly RegexNode[] }
  | { readonly type: 'repeat'; readonly body: RegexNode; readonly min: number; readonly max: number }
  | { readonly type: 'assert'; readonly kind: AssertKind }
  | { readonly type: 'look'; readonly behind: boolean; readonly negate: boolean; readonly body: RegexNode };

export type AssertKind = 'start' | 'end' | 'wordBoundary' | 'notWordBoundary';

/** A construct that cannot be matched without backtracking (a back-reference). */
export class UnsupportedRegexError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsupportedRegexError';
  }
}

type Range = readonly [number, number];

const digitRanges: Range[] = [[0x30, 0x39]];
const wordRanges: Range[] = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
// What `\s` matches: WhiteSpace and LineTerminator of ECMA-262.
const spaceRanges: Range[] = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];
const lineTerminators: Range[] = [
  [0x0a, 0x0a],
  [0x0d, 0x0d],
  [0x2028, 0x2029],
];

/** Sorted, merged ranges. */
export function normaliseRanges(ranges: readonly Range[]): Range[] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

function complement(ranges: readonly Range[]): Range[] {
  const out: Range[] = [];
  let from = 0;
  for (const [lo, hi] of normaliseRanges(ranges)) {
    if (lo > from) out.push([from, lo - 1]);
    from = hi + 1;
  }
  if (from <= 0xffff) out.push([from, 0xffff]);
  return out;
}

const classEscapes: Readonly<Record<string, Range[]>> = {
  d: digitRanges,
  D: complement(digitRanges),
  w: wordRanges,
  W: complement(wordRanges),
  s: spaceRanges,
  S: complement(spaceRanges),
};

const controlEscapes: Readonly<Record<string, number>> = { f: 0x0c, n: 0x0a, r: 0x0d, t: 0x09, v: 0x0b };

const isHex = (c: string | undefined): boolean => c !== undefined && /^[0-9A-Fa-f]$/.test(c);
const isOctal = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '7';
const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const isLetter = (c: string | undefined): boolean => c !== undefined && /^[A-Za-z]$/.test(c);

const single = (code: number): CharSet => ({ ranges: [[code, code]], negate: false });

/** Parses a regular expression source (flags must be empty) into a tree. */
export function parseRegex(source: string): RegexNode {
  return new Parser(source).parse();
}

class Parser {
  readonly #src: string;
  #i = 0;
  readonly #groups: number;
  readonly #named: boolean;

  constructor(source: string) {
    this.#src = source;
    const counted = countGroups(source);
    this.#groups = counted.groups;
    this.#named = counted.named;
  }

  parse(): RegexNode {
    const node = this.#disjunction();
    if (this.#i !== this.#src.length) throw new SyntaxError(`unexpected ${JSON.stringify(this.#src[this.#i])} at ${this.#i}`);
    return node;
  }

  #peek(offset = 0): string | undefined {
    return this.#src[this.#i + offset];
  }

  #disjunction(): RegexNode {
    const options = [this.#alternative()];
    while (this.#peek() === '|') {
      this.#i += 1;
      options.push(this.#alternative());
    }
    return options.length === 1 ? options[0]! : { type: 'alt', options };
  }

  #alternative(): RegexNode {
    const items: RegexNode[] = [];
    while (this.#i < this.#src.length && this.#peek() !== '|' && this.#peek() !== ')') items.push(this.#term());
    if (items.length === 0) return { type: 'empty' };
    return items.length === 1 ? items[0]! : { type: 'seq', items };
  }

  #term(): RegexNode {
    const c = this.#peek();
    if (c === '^' || c === '$') {
      this.#i += 1;
      return { type: 'assert', kind: c === '^' ? 'start' : 'end' };
    }
    if (c === '\\' && (this.#peek(1) === 'b' || this.#peek(1) === 'B')) {
      const kind = this.#peek(1) === 'b' ? 'wordBoundary' : 'notWordBoundary';
      this.#i += 2;
      return { type: 'assert', kind };
    }
    if (c === '(' && this.#peek(1) === '?' && this.#peek(2) === '<' && (this.#peek(3) === '=' || this.#peek(3) === '!')) {
      // Lookbehind: not quantifiable.
      const negate = this.#peek(3) === '!';
      this.#i += 4;
      const body = this.#disjunction();
      this.#expect(')');
      return { type: 'look', behind: true, negate, body };
    }
    return this.#quantified(this.#atom());
  }

  #atom(): RegexNode {
    const c = this.#peek()!;
    if (c === '(') return this.#group();
    if (c === '.') {
      this.#i += 1;
      return { type: 'chars', set: { ranges: lineTerminators, negate: true } };
    }
    if (c === '[') return { type: 'chars', set: this.#class() };
    if (c === '\\') return this.#escape();
    this.#i += 1;
    return { type: 'chars', set: single(c.charCodeAt(0)) };
  }

  #group(): RegexNode {
    this.#i += 1;
    let look: { negate: boolean } | undefined;
    if (this.#peek() === '?') {
      const kind = this.#peek(1);
      if (kind === ':') this.#i += 2;
      else if (kind === '=' || kind === '!') {
        look = { negate: kind === '!' };
        this.#i += 2;
      } else if (kind === '<') {
        // A named group: `(?<name>`.
        const end = this.#src.indexOf('>', this.#i);
        this.#i = end + 1;
      }
    }
    const body = this.#disjunction();
    this.#expect(')');
    // Annex B lets a lookahead be quantified: the quantifier then applies to the assertion.
    return look ? { type: 'look', behind: false, negate: look.negate, body } : body;
  }

  #quantified(atom: RegexNode): RegexNode {
    const c = this.#peek();
    let min: number;
    let max: number;
    if (c === '*') [min, max] = [0, Infinity];
    else if (c === '+') [min, max] = [1, Infinity];
    else if (c === '?') [min, max] = [0, 1];
    else if (c === '{') {
      const braced = /^\{(\d+)(,(\d*))?\}/.exec(this.#src.slice(this.#i));
      if (!braced) return atom;
      min = Number(braced[1]);
      max = braced[2] === undefined ? min : braced[3] === '' ? Infinity : Number(braced[3]);
      this.#i += braced[0].length - 1;
    } else return atom;
    this.#i += 1;
    // Lazy or greedy makes no difference to whether a match exists.
    if (this.#peek() === '?') this.#i += 1;
    return { type: 'repeat', body: atom, min, max };
  }

  #expect(c: string): void {
    if (this.#peek() !== c) throw new SyntaxError(`expected ${JSON.stringify(c)} at ${this.#i}`);
    this.#i += 1;
  }

  /** After `\` outside a class. */
  #escape(): RegexNode {
    this.#i += 1;
    const c = this.#peek();
    if (c === undefined) throw new SyntaxError('\\ at end of pattern');
    if (isDigit(c) && c !== '0') {
      const digits = /^\d+/.exec(this.#src.slice(this.#i))![0];
      if (Number(digits) <= this.#groups) throw new UnsupportedRegexError('a back-reference');
    }
    if (c === 'k' && this.#named) throw new UnsupportedRegexError('a back-reference');
    const set = this.#characterEscape(false);
    return { type: 'chars', set };
  }

  /**
   * The escape after `\` (the index is on the character after it), as a set. In a class `\b`
   * is a backspace; outside one it was read as an assertion before this is reached.
   */
  #characterEscape(inClass: boolean): CharSet {
    const c = this.#peek()!;
    const escape = classEscapes[c];
    if (escape) {
      this.#i += 1;
      return { ranges: escape, negate: false };
    }
    const control = controlEscapes[c];
    if (control !== undefined) {
      this.#i += 1;
      return single(control);
    }
    if (c === 'b' && inClass) {
      this.#i += 1;
      return single(0x08);
    }
    if (c === 'c') {
      const letter = this.#peek(1);
      if (isLetter(letter) || (inClass && (isDigit(letter) || letter === '_'))) {
        this.#i += 2;
        return single(letter!.charCodeAt(0) % 32);
      }
      // `\c` without a control letter is a backslash; the `c` is read next as itself.
      return single(0x5c);
    }
    if (c === 'x' && isHex(this.#peek(1)) && isHex(this.#peek(2))) {
      const code = parseInt(this.#src.slice(this.#i + 1, this.#i + 3), 16);
      this.#i += 3;
      return single(code);
    }
    if (c === 'u' && [1, 2, 3, 4].every((k) => isHex(this.#peek(k)))) {
      const code = parseInt(this.#src.slice(this.#i + 1, this.#i + 5), 16);
      this.#i += 5;
      return single(code);
    }
    if (c === '0' && !isDigit(this.#peek(1))) {
      this.#i += 1;
      return single(0);
    }
    if (isOctal(c)) return single(this.#legacyOctal());
    // Identity escape (`\8` and `\9` included).
    this.#i += 1;
    return single(c.charCodeAt(0));
  }

  /** `\NNN`: up to three octal digits, at most 0o377. */
  #legacyOctal(): number {
    const first = this.#peek()!;
    const maxDigits = first <= '3' ? 3 : 2;
    let text = '';
    while (text.length < maxDigits && isOctal(this.#peek())) {
      text += this.#peek();
      this.#i += 1;
    }
    return parseInt(text, 8);
  }

  #class(): CharSet {
    this.#i += 1;
    let negate = false;
    if (this.#peek() === '^') {
      negate = true;
      this.#i += 1;
    }
    const ranges: Range[] = [];
    while (this.#peek() !== ']') {
      if (this.#peek() === undefined) throw new SyntaxError('unterminated class');
      const from = this.#classAtom();
      if (this.#peek() === '-' && this.#peek(1) !== ']' && this.#peek(1) !== undefined) {
        this.#i += 1;
        const to = this.#classAtom();
        if (from.single !== undefined && to.single !== undefined) {
          ranges.push([from.single, to.single]);
          continue;
        }
        // Annex B: a class escape at either end makes the `-` a plain character.
        ranges.push(...from.ranges, [0x2d, 0x2d], ...to.ranges);
        continue;
      }
      ranges.push(...from.ranges);
    }
    this.#i += 1;
    return { ranges: normaliseRanges(ranges), negate };
  }

  #classAtom(): { single?: number; ranges: Range[] } {
    const c = this.#peek()!;
    if (c !== '\\') {
      this.#i += 1;
      const code = c.charCodeAt(0);
      return { single: code, ranges: [[code, code]] };
    }
    this.#i += 1;
    const set = this.#characterEscape(true);
    const only = set.ranges.length === 1 && !set.negate && set.ranges[0]![0] === set.ranges[0]![1] ? set.ranges[0]![0] : undefined;
    const ranges = set.negate ? complement(set.ranges) : [...set.ranges];
    return only === undefined ? { ranges } : { single: only, ranges };
  }
}

/** Capturing groups (numbered and named) of a source, and whether any is named. */
function countGroups(source: string): { groups: number; named: boolean } {
  let groups = 0;
  let named = false;
  let inClass = false;
  for (let i = 0; i < source.length; i += 1) {
    const c = source[i];
    if (c === '\\') {
      i += 1;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === '(') {
      if (source[i + 1] !== '?') groups += 1;
      else if (source[i + 2] === '<' && source[i + 3] !== '=' && source[i + 3] !== '!') {
        groups += 1;
        named = true;
      }
    }
  }
  return { groups, named };
}
