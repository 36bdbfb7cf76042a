import fc from 'fast-check';
import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { protectMatcher } from '../../../src/apply/protect-matcher.js';
import { compileGlob, globOptions, globProblem } from '../../../src/glob/glob-matcher.js';
import { LinearRegex } from '../../../src/glob/linear-regex.js';

// Glob pieces: picomatch's syntax (wildcards, classes, braces, extglobs, escapes) and the
// regular-expression syntax it passes through (groups, lookarounds, escapes).
const pieces = [
  'a', 'b', '-', '.', '/', ' ', 'é', '1', '*', '**', '?', '[a-c]', '[!a]', '[^b]', '[[:alpha:]]', '[[:space:]]', '{a,b}', '{1..3}',
  '!(a)', '@(a|b)', '*(a)', '+(b)', '?(a)', '\\*', '\\b', '\\d', '\\w', '(a|b)', '(?=a)', '(?!b)', '(?<=a)', '(?<!b)', '{1,2}', '^', '$', '!', ']', '[', '(', ')', '|', '\\',
];
const namePieces = ['a', 'b', '-', '.', '/', ' ', 'é', '1', '\n', '_', '*', '[', '!'];
const glob = fc.array(fc.constantFrom(...pieces), { minLength: 1, maxLength: 6 }).map((parts) => parts.join(''));
const name = fc.array(fc.constantFrom(...namePieces), { maxLength: 8 }).map((parts) => parts.join(''));

describe('protect globs match exactly as picomatch reads them', () => {
  it('the linear matcher agrees with picomatch on every glob picomatch accepts (property)', () => {
    fc.assert(
      fc.property(glob, fc.array(name, { minLength: 1, maxLength: 20 }), (g, names) => {
        const re = (() => {
          try {
            return picomatch.makeRe(g, globOptions);
          } catch {
            return undefined;
          }
        })();
        fc.pre(re !== undefined && re.source !== '$^' && globProblem(g) === undefined);
        const ours = compileGlob(g);
        const theirs = picomatch(g, globOptions);
        // The glob itself is among the names: picomatch matches a name equal to its glob.
        for (const n of [...names, g]) expect(ours(n), `${JSON.stringify(g)} vs ${JSON.stringify(n)}`).toBe(theirs(n));
      }),
      { numRuns: 3000, seed: 20241121 },
    );
  });

  it('names are not paths: * matches /, and leading dots match', () => {
    const m = compileGlob('admin*');
    expect([m('admin'), m('admin/x'), m('administrator'), m('xadmin')]).toEqual([true, true, true, false]);
    expect(compileGlob('*')('.hidden')).toBe(true);
  });

  it('a glob whose regex needs back-references is refused, saying why', () => {
    expect(globProblem('(a)\\1')).toBe('it uses a back-reference, which amsync cannot match in linear time');
    expect(globProblem('vendor-{a,b')).toMatch(/can never match/);
    expect(globProblem('*-*-*-*-*-*-prod')).toBeUndefined();
  });
});

describe('a hostile remote name cannot stall matching', () => {
  // picomatch makes ^(?:.*?-.*?-.*?-.*?-.*?-.*?-prod)$ of it: a backtracking engine tries
  // every way to split the dashes, for minutes on 200 of them.
  const pathological = '*-*-*-*-*-*-prod';

  it('*-*-*-*-*-*-prod against 200 dashes answers, and the work is linear in the name', () => {
    const m = compileGlob(pathological);
    expect(m('-'.repeat(200))).toBe(false);
    const steps200 = m.lastSteps();
    expect(m('-'.repeat(400))).toBe(false);
    const steps400 = m.lastSteps();
    // At most the automaton's states per position, and doubling the name at most doubles the work.
    expect(steps200).toBeLessThanOrEqual(4 * m.size * 201);
    expect(steps400).toBeLessThanOrEqual(2 * steps200 + 4 * m.size);
    expect(m(`${'-'.repeat(200)}-prod`)).toBe(true);
    expect(m('a-b-c-d-e-f-prod')).toBe(true);
  });

  it('the planner predicate protects and refuses with the same answers', () => {
    const isProtected = protectMatcher({ sshUsers: [pathological, 'root'], apikeys: [] });
    expect(isProtected('sshUser', '-'.repeat(200))).toBe(false);
    expect(isProtected('sshUser', `x-${'-'.repeat(198)}-prod`)).toBe(true);
    expect(isProtected('sshUser', 'root')).toBe(true);
    expect(isProtected('apikey', 'root')).toBe(false);
  });

  it('lookarounds are tables, not searches: a negated extglob stays linear', () => {
    const m = compileGlob('!(*-*-*-prod)');
    for (const n of [100, 200, 400]) {
      expect(m('-'.repeat(n))).toBe(true);
      expect(m.lastSteps()).toBeLessThanOrEqual(4 * m.size * (n + 1));
    }
  });
});

describe('LinearRegex answers as RegExp.test does', () => {
  const cases: [string, string[]][] = [
    ['^a.c$', ['abc', 'a\nc', 'ac', 'xabc']],
    ['b+', ['abbbc', 'ac', '']],
    ['^(?:a|ab)(?:c|bcd)(?:d*)$', ['abcd', 'abcdd', 'acd', 'abd']],
    ['\\bfoo\\b', ['a foo b', 'afoo', 'foo']],
    ['(?<=a)b', ['ab', 'cb', 'b']],
    ['^(?:(?!x).)*$', ['abc', 'axc', '']],
    ['[\\d-z]', ['-', '5', 'y', 'z']],
    ['^\\x41\\u00e9\\0\\cA$', ['Aé\u0000\u0001', 'Ae']],
    ['^(?:a{2,3})$', ['a', 'aa', 'aaa', 'aaaa']],
    ['^[^]$', ['\n']],
    ['^[]$', ['', 'a']],
    ['(?=a)*b', ['b', 'ab']],
  ];
  for (const [source, inputs] of cases) {
    it(`/${source}/`, () => {
      const ours = new LinearRegex(source);
      const native = new RegExp(source);
      for (const input of inputs) expect(ours.test(input), JSON.stringify(input)).toBe(native.test(input));
    });
  }
});
