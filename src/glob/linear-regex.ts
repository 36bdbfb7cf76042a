import { normaliseRanges, parseRegex, UnsupportedRegexError, type AssertKind, type CharSet, type RegexNode } from './regex-syntax.js';

/**
 * A regular expression matched in time linear in the input: O(states × input length), whatever
 * the pattern, where a backtracking engine (V8's) can take exponential or high-polynomial time
 * (`^(?:.*?-.*?-.*?-.*?-.*?-.*?-prod)$` against 200 dashes runs for minutes).
 *
 * The pattern becomes a Thompson automaton per (sub)pattern: the main one and one per
 * lookaround body. Matching fills, position by position, which states can still reach an
 * accepting end: backwards for the main pattern and lookaheads, forwards for lookbehinds.
 * Each lookaround's answer at every position is computed before the pattern that contains it
 * (innermost first), so an assertion is a table lookup. Only whether a match exists is
 * answered, which is all a glob needs: no captures, no back-references (refused).
 */
export class LinearRegex {
  readonly #programs: readonly Program[];
  readonly #main: Program;
  /** Every path of the main pattern starts with `^`: no match can start after position 0. */
  readonly #anchored: boolean;
  #steps = 0;
  #input = '';
  /** Lookaround answers per position for the current input, computed when first needed. */
  #tables: (Uint8Array | undefined)[] = [];

  constructor(source: string, flags = '') {
    if (flags !== '') throw new UnsupportedRegexError(`flags ${JSON.stringify(flags)}`);
    const builder = new Builder();
    builder.program(parseRegex(source), 'main');
    this.#programs = builder.programs;
    this.#main = this.#programs[this.#programs.length - 1]!;
    this.#anchored = this.#main.op[this.#main.start] === opAssert && this.#main.asserts[this.#main.start] === 'start';
  }

  /** States of all the automata together: the factor of the input length in the cost. */
  get size(): number {
    return this.#programs.reduce((sum, p) => sum + p.op.length, 0);
  }

  /** Work done by the last test(): states visited and edges followed. */
  get lastSteps(): number {
    return this.#steps;
  }

  /** Whether the pattern matches anywhere in `input`, as `RegExp.prototype.test` would say. */
  test(input: string): boolean {
    this.#steps = 0;
    this.#input = input;
    this.#tables = [];
    try {
      return this.#matchMain();
    } finally {
      this.#input = '';
      this.#tables = [];
    }
  }

  /**
   * The main pattern, simulated forwards: the set of live states per position, so a name
   * that fails early costs little. A match may start anywhere (as RegExp.test), unless the
   * pattern is anchored.
   */
  #matchMain(): boolean {
    return this.#simulate(this.#main, !this.#anchored, () => true);
  }

  /**
   * The forward simulation the main pattern and lookbehinds share: the live states per
   * position. `restart`: the start state joins at every position (a match may begin
   * anywhere), else only at 0. `onMatch(p)` is told each position where the program matches;
   * returning true stops the run, which then answers true.
   */
  #simulate(program: Program, restart: boolean, onMatch: (p: number) => boolean): boolean {
    const input = this.#input;
    const n = input.length;
    const { stamp, stack } = program.scratch;
    let active = program.scratch.active;
    let reached = program.scratch.reached;
    let live = 0;
    for (let p = 0; p <= n; p += 1) {
      const gen = (program.scratch.gen += 1);
      let top = 0;
      if (p > 0) {
        const c = input.charCodeAt(p - 1);
        for (let i = 0; i < live; i += 1) {
          const s = active[i]!;
          this.#steps += 1;
          const t = program.next[s]!;
          if (stamp[t] !== gen && program.tests[s]!(c)) {
            stamp[t] = gen;
            stack[top++] = t;
          }
        }
      }
      if ((p === 0 || restart) && stamp[program.start] !== gen) {
        stamp[program.start] = gen;
        stack[top++] = program.start;
      }
      let count = 0;
      while (top > 0) {
        const s = stack[--top]!;
        this.#steps += 1;
        const op = program.op[s];
        if (op === opChar) reached[count++] = s;
        else if (op === opMatch) {
          if (onMatch(p)) return true;
        } else if (op === opEps) {
          for (const t of program.eps[s]!) {
            if (stamp[t] !== gen) {
              stamp[t] = gen;
              stack[top++] = t;
            }
          }
        } else if (this.#holds(program, s, p)) {
          const t = program.next[s]!;
          if (stamp[t] !== gen) {
            stamp[t] = gen;
            stack[top++] = t;
          }
        }
      }
      [active, reached] = [reached, active];
      live = count;
      // Nothing live and nothing to start again: no later position can match.
      if (live === 0 && !restart) return false;
    }
    return false;
  }

  /** The answers of a lookaround's pattern at every position of the current input. */
  #table(index: number): Uint8Array {
    const known = this.#tables[index];
    if (known) return known;
    const program = this.#programs[index]!;
    const table = program.kind === 'behind' ? this.#forward(program) : this.#backward(program);
    this.#tables[index] = table;
    return table;
  }

  /** For each position p, whether the program matches starting at p (ending anywhere). */
  #backward(program: Program): Uint8Array {
    const input = this.#input;
    const n = input.length;
    const out = new Uint8Array(n + 1);
    const { stack } = program.scratch;
    let next = program.scratch.rowA;
    let cur = program.scratch.rowB;
    next.fill(0);
    for (let p = n; p >= 0; p -= 1) {
      cur.fill(0);
      let top = 0;
      if (p < n) {
        const c = input.charCodeAt(p);
        for (const s of program.charStates) {
          this.#steps += 1;
          if (next[program.next[s]!] === 1 && program.tests[s]!(c)) {
            cur[s] = 1;
            stack[top++] = s;
          }
        }
      }
      cur[program.match] = 1;
      stack[top++] = program.match;
      while (top > 0) {
        const t = stack[--top]!;
        for (const s of program.preds[t]!) {
          this.#steps += 1;
          if (cur[s] === 0 && this.#holds(program, s, p)) {
            cur[s] = 1;
            stack[top++] = s;
          }
        }
      }
      out[p] = cur[program.start]!;
      [next, cur] = [cur, next];
    }
    return out;
  }

  /** For each position p, whether the program matches some input ending exactly at p. */
  #forward(program: Program): Uint8Array {
    const out = new Uint8Array(this.#input.length + 1);
    this.#simulate(program, true, (p) => {
      out[p] = 1;
      return false;
    });
    return out;
  }

  /** Whether the epsilon-like edge out of state `s` may be taken at position p. */
  #holds(program: Program, s: number, p: number): boolean {
    const op = program.op[s];
    if (op === opEps) return true;
    if (op === opLook) {
      const look = program.looks[s]!;
      return (this.#table(look.program)[p] === 1) !== look.negate;
    }
    const input = this.#input;
    switch (program.asserts[s]) {
      case 'start':
        return p === 0;
      case 'end':
        return p === input.length;
      case 'wordBoundary':
        return isWordAt(input, p - 1) !== isWordAt(input, p);
      default:
        return isWordAt(input, p - 1) === isWordAt(input, p);
    }
  }
}

const opChar = 0;
const opEps = 1;
const opAssert = 2;
const opLook = 3;
const opMatch = 4;

interface Program {
  readonly index: number;
  readonly kind: 'main' | 'ahead' | 'behind';
  readonly start: number;
  readonly match: number;
  readonly op: Uint8Array;
  /** The one successor of a char, assertion or lookaround state. */
  readonly next: Int32Array;
  readonly eps: readonly (readonly number[])[];
  readonly tests: readonly (((c: number) => boolean) | undefined)[];
  readonly asserts: readonly (AssertKind | undefined)[];
  /** Index of the lookaround's program, and whether it is negative. */
  readonly looks: readonly ({ program: number; negate: boolean } | undefined)[];
  readonly charStates: Int32Array;
  /** States with an epsilon-like edge (empty, assertion, lookaround) into each state. */
  readonly preds: readonly (readonly number[])[];
  /** Buffers reused from call to call (matching is synchronous). */
  readonly scratch: Scratch;
}

interface Scratch {
  readonly stamp: Int32Array;
  readonly stack: Int32Array;
  active: Int32Array;
  reached: Int32Array;
  rowA: Uint8Array;
  rowB: Uint8Array;
  gen: number;
}

function isWordAt(input: string, i: number): boolean {
  if (i < 0 || i >= input.length) return false;
  const c = input.charCodeAt(i);
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || c === 0x5f || (c >= 0x61 && c <= 0x7a);
}

/** Beyond this many states a pattern is refused: matching costs states × input length. */
export const maxStates = 10_000;

interface State {
  op: number;
  next: number;
  eps: number[];
  test?: (c: number) => boolean;
  assert?: AssertKind;
  look?: { program: number; negate: boolean };
}

/** Compiles trees into programs, lookaround bodies first. */
class Builder {
  readonly programs: Program[] = [];
  #total = 0;

  program(node: RegexNode, kind: Program['kind']): number {
    const states: State[] = [];
    const add = (state: State): number => {
      states.push(state);
      this.#total += 1;
      if (this.#total > maxStates) throw new UnsupportedRegexError(`a pattern of more than ${maxStates} states`);
      return states.length - 1;
    };
    const match = add({ op: opMatch, next: -1, eps: [] });
    const compile = (n: RegexNode, next: number): number => {
      switch (n.type) {
        case 'empty':
          return next;
        case 'chars':
          return add({ op: opChar, next, eps: [], test: charTest(n.set) });
        case 'seq':
          return n.items.reduceRight((after, item) => compile(item, after), next);
        case 'alt': {
          const starts = n.options.map((option) => compile(option, next));
          return add({ op: opEps, next: -1, eps: starts });
        }
        case 'assert':
          return add({ op: opAssert, next, eps: [], assert: n.kind });
        case 'look': {
          const program = this.program(n.body, n.behind ? 'behind' : 'ahead');
          return add({ op: opLook, next, eps: [], look: { program, negate: n.negate } });
        }
        case 'repeat':
          return compileRepeat(n, next);
      }
    };
    const compileRepeat = (n: Extract<RegexNode, { type: 'repeat' }>, next: number): number => {
      let cur = next;
      if (n.max === Infinity) {
        const loop = add({ op: opEps, next: -1, eps: [] });
        states[loop]!.eps = [compile(n.body, loop), next];
        cur = loop;
      } else {
        for (let k = n.min; k < n.max; k += 1) {
          const body = compile(n.body, cur);
          cur = add({ op: opEps, next: -1, eps: [body, next] });
        }
      }
      for (let k = 0; k < n.min; k += 1) cur = compile(n.body, cur);
      return cur;
    };
    const start = compile(node, match);
    const index = this.programs.length;
    this.programs.push(freeze(states, start, match, kind, index));
    return index;
  }
}

function freeze(states: readonly State[], start: number, match: number, kind: Program['kind'], index: number): Program {
  const size = states.length;
  const op = new Uint8Array(size);
  const next = new Int32Array(size);
  const preds: number[][] = states.map(() => []);
  const charStates: number[] = [];
  states.forEach((s, i) => {
    op[i] = s.op;
    next[i] = s.next;
    if (s.op === opChar) charStates.push(i);
    else if (s.op === opEps) for (const t of s.eps) preds[t]!.push(i);
    else if (s.op === opAssert || s.op === opLook) preds[s.next]!.push(i);
  });
  return {
    index,
    kind,
    start,
    match,
    op,
    next,
    eps: states.map((s) => s.eps),
    tests: states.map((s) => s.test),
    asserts: states.map((s) => s.assert),
    looks: states.map((s) => s.look),
    charStates: Int32Array.from(charStates),
    preds,
    scratch: {
      stamp: new Int32Array(size),
      // A state enters the stack at most once per position; closures can revisit none.
      stack: new Int32Array(size),
      active: new Int32Array(size),
      reached: new Int32Array(size),
      rowA: new Uint8Array(size),
      rowB: new Uint8Array(size),
      gen: 0,
    },
  };
}

/** A membership test for a set of UTF-16 code units: a table for ASCII, ranges above. */
function charTest(set: CharSet): (c: number) => boolean {
  const ranges = normaliseRanges(set.ranges);
  const ascii = new Uint8Array(128);
  const high: (readonly [number, number])[] = [];
  for (const [lo, hi] of ranges) {
    for (let c = lo; c <= Math.min(hi, 127); c += 1) ascii[c] = 1;
    if (hi >= 128) high.push([Math.max(lo, 128), hi]);
  }
  const { negate } = set;
  return (c) => {
    let inSet: boolean;
    if (c < 128) inSet = ascii[c] === 1;
    else {
      inSet = false;
      for (const [lo, hi] of high) {
        if (c < lo) break;
        if (c <= hi) {
          inSet = true;
          break;
        }
      }
    }
    return inSet !== negate;
  };
}
