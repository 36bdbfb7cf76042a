import fc from 'fast-check';
import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { compileGlob, globOptions, globProblem } from '../../../src/glob/glob-matcher.js';
import { LinearRegex } from '../../../src/glob/linear-regex.js';
import { compileNamePattern, namePatternProblem } from '../../../src/glob/name-pattern.js';

/**
 * src/glob/ held to what it shadows: compileGlob to picomatch (`picomatch(glob, globOptions)`),
 * and the linear engine under it (LinearRegex, compileNamePattern) to V8's RegExp, on the
 * subset both support (a glob picomatch compiles and glob/ does not refuse; a regex without
 * back-references). Names are both random and made from the glob itself, so that most of
 * them match and the positive answers are tested too. protect-globs.test.ts has the first
 * property of this kind (random names); the hostile table below is what the engine is for.
 */

// A glob as pieces, each with the names it may stand for (so a name can be built to match it).
const globPieces: [string, string[]][] = [
  ['a', ['a']],
  ['b', ['b']],
  ['-', ['-']],
  ['.', ['.']],
  ['/', ['/']],
  ['é', ['é']],
  ['1', ['1']],
  ['*', ['', 'x', '--', 'a/b', '.z']],
  ['**', ['', 'y', 'a-b']],
  ['?', ['q', '-', '/']],
  ['[a-c]', ['a', 'c']],
  ['[!a]', ['b', 'z']],
  ['[^b]', ['a', '-']],
  ['[[:digit:]]', ['0', '9']],
  ['[[:alpha:]]', ['a', 'Z']],
  ['{a,b}', ['a', 'b']],
  ['{ci,cd}-', ['ci-', 'cd-']],
  ['{1..3}', ['1', '2', '3']],
  ['@(a|b)', ['a', 'b']],
  ['*(a)', ['', 'a', 'aa']],
  ['+(b)', ['b', 'bb']],
  ['?(a)', ['', 'a']],
  ['!(a)', ['b', '', 'ab']],
  ['\\*', ['*']],
  ['\\?', ['?']],
];
const noise = ['a', 'b', '-', '.', '/', 'é', '1', '*', '?', '\n', ' ', 'Z'];

const pieceIndexes = fc.array(fc.nat({ max: globPieces.length - 1 }), { minLength: 1, maxLength: 6 });
/** A glob and a name made from it: each piece's stand-in, sometimes with noise dropped in. */
const globAndName = pieceIndexes.chain((indexes) =>
  fc
    .tuple(
      fc.tuple(...indexes.map((i) => fc.constantFrom(...globPieces[i]![1]))),
      fc.array(fc.tuple(fc.nat(), fc.constantFrom(...noise)), { maxLength: 2 }),
    )
    .map(([parts, edits]) => {
      let name = parts.join('');
      for (const [at, what] of edits) {
        const i = name.length === 0 ? 0 : at % (name.length + 1);
        name = name.slice(0, i) + what + name.slice(i);
      }
      return { glob: indexes.map((i) => globPieces[i]![0]).join(''), name };
    }),
);

function usable(glob: string): boolean {
  try {
    const re = picomatch.makeRe(glob, globOptions);
    return re.source !== '$^' && globProblem(glob) === undefined;
  } catch {
    return false;
  }
}

describe('compileGlob answers as picomatch does (property)', () => {
  it('names made from the glob, most of them matching', () => {
    let matched = 0;
    fc.assert(
      fc.property(fc.array(globAndName, { minLength: 1, maxLength: 5 }), (cases) => {
        for (const { glob, name } of cases) {
          if (!usable(glob)) continue;
          const theirs = picomatch(glob, globOptions)(name);
          expect(compileGlob(glob)(name), `${JSON.stringify(glob)} vs ${JSON.stringify(name)}`).toBe(theirs);
          if (theirs) matched += 1;
        }
      }),
      { numRuns: 400 },
    );
    // Not vacuous: a good share of the names match.
    expect(matched).toBeGreaterThan(200);
  });

  it('anyGlob-like use: several globs against many names give picomatch\'s answers', () => {
    fc.assert(
      fc.property(fc.array(globAndName, { minLength: 1, maxLength: 4 }), fc.array(fc.string({ maxLength: 10 }), { maxLength: 10 }), (cases, extra) => {
        const globs = cases.map((c) => c.glob).filter(usable);
        const ours = globs.map(compileGlob);
        const theirs = globs.map((g) => picomatch(g, globOptions));
        for (const name of [...cases.map((c) => c.name), ...extra, ...globs]) {
          expect(ours.some((m) => m(name)), JSON.stringify({ globs, name })).toBe(theirs.some((m) => m(name)));
        }
      }),
      { numRuns: 300 },
    );
  });
});

// Regular expressions as pieces: what picomatch emits and what a usernamePattern may hold.
const regexPieces = ['a', 'b', '-', '.', '[ab]', '[^a]', '[a-c\\d]', '\\d', '\\w', '\\W', '\\s', '\\b', '\\B', '(', ')', '(?:', '|', '*', '+', '?', '*?', '+?', '{2}', '{1,2}', '{0,}', '(?=a)', '(?!a)', '(?<=a)', '(?<!a)', '(?=', '(?!', '(?<=', '(?<!', '^', '$', '\\.', '\\x41', '\\u00e9', '[^]', 'é'];
const regex = fc.array(fc.constantFrom(...regexPieces), { minLength: 1, maxLength: 8 }).map((parts) => parts.join(''));
const input = fc.array(fc.constantFrom('a', 'b', '-', '.', 'A', 'é', '1', ' ', '\n', '_'), { maxLength: 8 }).map((parts) => parts.join(''));

function v8(source: string): RegExp | undefined {
  try {
    return new RegExp(source);
  } catch {
    return undefined;
  }
}

describe('the linear engine answers as V8\'s RegExp does (property)', () => {
  it('LinearRegex.test on generated expressions', () => {
    let compared = 0;
    fc.assert(
      fc.property(regex, fc.array(input, { minLength: 1, maxLength: 8 }), (source, inputs) => {
        const native = v8(source);
        if (native === undefined) return;
        const ours = new LinearRegex(source);
        compared += 1;
        for (const s of inputs) expect(ours.test(s), `/${source}/ on ${JSON.stringify(s)}`).toBe(native.test(s));
      }),
      { numRuns: 2000 },
    );
    expect(compared).toBeGreaterThan(500);
  });

  it('compileNamePattern matches the whole name, as ^(?:pattern)$ does', () => {
    fc.assert(
      fc.property(regex, fc.array(input, { minLength: 1, maxLength: 8 }), (pattern, names) => {
        if (namePatternProblem(pattern) !== undefined) {
          // Refused only where V8 refuses it too, or for a back-reference (none generated).
          expect(v8(pattern) === undefined || v8(`^(?:${pattern})$`) === undefined, pattern).toBe(true);
          return;
        }
        const ours = compileNamePattern(pattern);
        const native = new RegExp(`^(?:${pattern})$`);
        for (const n of names) expect(ours(n), `${pattern} on ${JSON.stringify(n)}`).toBe(native.test(n));
      }),
      { numRuns: 2000 },
    );
  });
});

// What the engine exists for: a name under someone else's control against a glob or pattern
// that makes a backtracking engine take polynomial or exponential time. The answers are
// picomatch's / V8's (checked on a short name in the same row, where those engines finish);
// the work must stay linear: at most ~4 × states per character.
const hostileGlobs: [glob: string, name: (n: number) => string, answer: boolean][] = [
  ['*-*-*-*-*-*-prod', (n) => '-'.repeat(n), false],
  ['*-*-*-*-*-*-prod', (n) => `${'-'.repeat(n)}-prod`, true],
  ['!(*-*-*-prod)', (n) => '-'.repeat(n), true],
  ['*(a|aa)b', (n) => 'a'.repeat(n), false],
  ['+(+(a))b', (n) => 'a'.repeat(n), false],
  ['*a*a*a*a*a*b', (n) => 'a'.repeat(n), false],
  ['**/**/**/**/x', (n) => '/'.repeat(n), false],
  ['@(*|*)@(*|*)@(*|*)z', (n) => 'y'.repeat(n), false],
  ['?(a)?(a)?(a)?(a)?(a)?(a)aaaaaa', (n) => 'a'.repeat(Math.min(n, 11)), true],
];
const hostilePatterns: [pattern: string, name: (n: number) => string, answer: boolean][] = [
  ['(a+)+b', (n) => 'a'.repeat(n), false],
  ['(a|a)*b', (n) => 'a'.repeat(n), false],
  ['(a*)*b', (n) => 'a'.repeat(n), false],
  ['(.*){1,20}x', (n) => 'y'.repeat(n), false],
  ['(?:a|ab|b)*c', (n) => 'ab'.repeat(n), false],
  ['(?=(a+)+)a*b', (n) => 'a'.repeat(n), false],
  ['(\\w+\\s?)+$', (n) => `${'a'.repeat(n)}!`, false],
  ['[a-z]+(?:-[a-z]+)*', (n) => 'a-'.repeat(n).slice(0, -1), true],
];

describe('hostile globs and patterns: the same answer, in linear work', () => {
  for (const [glob, name, answer] of hostileGlobs) {
    it(`glob ${glob}`, () => {
      const m = compileGlob(glob);
      // A short name, where picomatch finishes: the same answer as it gives.
      expect(m(name(12))).toBe(picomatch(glob, globOptions)(name(12)));
      for (const n of [1_000, 2_000]) {
        expect(m(name(n))).toBe(answer);
        expect(m.lastSteps()).toBeLessThanOrEqual(4 * m.size * (name(n).length + 1));
      }
    });
  }
  for (const [pattern, name, answer] of hostilePatterns) {
    it(`usernamePattern ${pattern}`, () => {
      const m = compileNamePattern(pattern);
      const whole = `^(?:${pattern})$`;
      expect(m(name(10))).toBe(new RegExp(whole).test(name(10)));
      const linear = new LinearRegex(whole);
      for (const n of [1_000, 2_000]) {
        expect(m(name(n))).toBe(answer);
        expect(linear.test(name(n))).toBe(answer);
        expect(linear.lastSteps).toBeLessThanOrEqual(4 * linear.size * (name(n).length + 1));
      }
    });
  }

  it('a back-reference is refused (it cannot be matched without backtracking), with why', () => {
    expect(namePatternProblem('(a+)\\1')).toBe('it uses a back-reference, which amsync cannot match in linear time');
    expect(globProblem('(a)\\1')).toBe('it uses a back-reference, which amsync cannot match in linear time');
  });
});
