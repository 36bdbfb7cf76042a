import fc from 'fast-check';
import { isMap, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import { describe, expect, it } from 'vitest';
import { PositionsNeeded, readPlainYaml } from '../../../src/yaml/plain-yaml.js';
import { readYaml } from '../../../src/yaml/yaml-source.js';

/**
 * The fast path of src/yaml/plain-yaml.ts held to the library it shadows, `yaml` itself (and to
 * amsync's full reader built on it): on any text, readPlainYaml either declines (undefined) or
 * gives exactly what `yaml` gives — the same value, no error and no warning from `yaml`, and
 * the same line and column for every position it keeps (each item of a top-level block list,
 * each top-level key; a flow list keeps none, and asking throws PositionsNeeded). plain-yaml.test.ts generates its texts with `yaml`'s stringify; the
 * texts here are put together line by line, so they are also what `yaml` would never write.
 */
type Outcome = 'declines' | 'agrees';

function positionOf(lines: LineCounter, node: unknown): { line: number; col: number } {
  return lines.linePos((node as Node).range![0]);
}

function compare(text: string): Outcome {
  const plain = readPlainYaml(text, 'a.yaml');
  if (plain === undefined) return 'declines';
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  expect(doc.errors.map((e) => e.code), text).toEqual([]);
  expect(doc.warnings.map((e) => e.code), text).toEqual([]);
  expect(plain.value, text).toEqual(doc.toJS());
  // amsync's full reader (what the fast path stands in for) agrees too: no diagnostic at all.
  const full = readYaml(text, 'a.yaml');
  expect([...full.errors, ...full.warnings], text).toEqual([]);
  expect(isMap(doc.contents), text).toBe(true);
  if (!isMap(doc.contents)) return 'agrees';
  for (const pair of doc.contents.items) {
    const key = String((pair.key as { value: unknown }).value);
    expect(plain.locate([key], 'key'), `key ${key} in\n${text}`).toEqual({ file: 'a.yaml', ...positionOf(lines, pair.key) });
    if (!isSeq(pair.value)) continue;
    // A flow list keeps no positions (a file that needs one is read again by readYaml).
    if (pair.value.flow) {
      expect(() => plain.locate([key, 0]), text).toThrow(PositionsNeeded);
      continue;
    }
    pair.value.items.forEach((item, i) => {
      expect(plain.locate([key, i]), `${key}[${i}] in\n${text}`).toEqual({ file: 'a.yaml', ...positionOf(lines, item) });
    });
  }
  return 'agrees';
}

// Pieces of lines: what desired files hold, and what YAML reads in surprising ways.
const keys = ['sshUsers', 'apikeys', 'prune', 'protect', 'username', 'name', 'level', 'roles', 'x_1', 'true', 'null', 'yes', '"q k"', "'s'", '__proto__', 'constructor', '1', 'a b', '<<', '? k', 'a:b'];
const scalars = ['a', 'n1', 'deploy', '0', '7', '007', '123456789012345', '1234567890123456', '-1', '+1', '1.5', '.5', '1e3', '0x1F', '0o17', '~', 'null', 'Null', 'true', 'False', 'TRUE', 'yes', 'no', 'on', '-', '- a', '-a', 'a-', 'a #c', 'a#c', 'a: b', 'a:b', ':a', '"x"', '"a\\"b"', "'it''s'", "'a", '"a', '[]', '{}', '[1, 2]', '[a,b]', '[ a , "b" ]', '{a: 1}', '{a: 1, b: [2]}', '[[1]]', '[1, ]', '{a: 1, a: 2}', '&x a', '*x', '!!str 1', '|', '>', '@a', '`a', '%a', 'ünï', ''];
const indent = fc.constantFrom('', ' ', '  ', '   ', '    ', '      ');
const line = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(indent, fc.constantFrom('', '- '), fc.constantFrom(...keys), fc.constantFrom(':', ': ', ':  '), fc.constantFrom(...scalars), fc.constantFrom('', ' # c', '  ', '#c')).map((p) => p.join('')) },
  { weight: 3, arbitrary: fc.tuple(indent, fc.constantFrom('- ', '-  ', '-'), fc.constantFrom(...scalars)).map((p) => p.join('')) },
  { weight: 1, arbitrary: fc.tuple(indent, fc.constantFrom('# comment', '', '---', '...', '%YAML 1.2', '\t- a')).map((p) => p.join('')) },
);
const endOfLine = fc.constantFrom('\n', '\n', '\n', '\r\n', '');
const text = fc.array(fc.tuple(line, endOfLine), { minLength: 1, maxLength: 12 }).map((ls) => ls.map(([l, e]) => l + e).join(''));

// A well-formed skeleton the lines above are dropped into: most such texts are plain.
const usual = ['deploy', 'n1', 'ci-bot', 'a.b@c', '12', 'true', '[1, 2]', '[]', '{ env: PW }', '"quoted"', "'single'", 'absent', 'a#b', 'x # note'];
const value = fc.oneof({ weight: 9, arbitrary: fc.constantFrom(...usual) }, { weight: 1, arbitrary: fc.constantFrom(...scalars) });
const item = fc.tuple(fc.constantFrom('username', 'name'), value, fc.uniqueArray(fc.tuple(fc.constantFrom('level', 'roles', 'ensure', 'superuser', 'x_1'), value), { maxLength: 3, selector: ([k]) => k }));
const skeleton = fc
  .tuple(fc.constantFrom('  ', '', '    '), fc.array(item, { maxLength: 4 }), fc.array(item, { maxLength: 4 }), fc.boolean())
  .map(([pad, users, keys2, tail]) => {
    const block = (name: string, items: typeof users): string[] => [
      `${name}:`,
      ...items.flatMap(([k, v, rest]) => [`${pad}- ${k}: ${v}`, ...rest.map(([rk, rv]) => `${pad}  ${rk}: ${rv}`)]),
    ];
    return [...block('sshUsers', users), ...block('apikeys', keys2), ...(tail ? ['prune:', '  sshUsers: true'] : []), ''].join('\n');
  });

describe('readPlainYaml against yaml: it declines or gives what yaml gives (property)', () => {
  it('texts put together line by line', () => {
    // Most of these are declined (one odd line is enough); what is read must agree.
    fc.assert(fc.property(text, (t) => void compare(t)), { numRuns: 3000 });
  });

  it('desired-file skeletons with tricky scalars: most are read, all agree', () => {
    let agreed = 0;
    fc.assert(
      fc.property(skeleton, (t) => {
        if (compare(t) === 'agrees') agreed += 1;
      }),
      { numRuns: 800 },
    );
    // Not vacuous: the fast path takes a good share of them.
    expect(agreed).toBeGreaterThan(100);
  });

  it('skeletons with one line replaced by a generated one', () => {
    fc.assert(
      fc.property(skeleton, line, fc.nat(), (t, l, at) => {
        const ls = t.split('\n');
        ls[at % ls.length] = l;
        compare(ls.join('\n'));
      }),
      { numRuns: 2000 },
    );
  });
});

const deep = (levels: number): string => {
  let out = '';
  for (let i = 0; i < levels; i += 1) out += `${'  '.repeat(i)}k${i}:\n`;
  return `${out}${'  '.repeat(levels)}leaf: 1\n`;
};
const laughs = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]', ...'bcdefgh'.split('').map((c, i) => `${c}: &${c} [${Array(9).fill(`*${'abcdefgh'[i]}`).join(',')}]`), ''].join('\n');

// Hostile and surprising inputs, and what the fast path does with each. Whatever it does, it
// must agree with yaml where it reads (compare() checks that for every row).
const hostile: [string, string, Outcome][] = [
  ['billion laughs (aliases)', laughs, 'declines'],
  ['nesting 40 levels deep (over the limit of 32)', deep(40), 'declines'],
  ['nesting 20 levels deep', deep(20), 'agrees'],
  ['__proto__ as a key', '__proto__:\n  polluted: 1\n', 'declines'],
  ['"__proto__" quoted', '"__proto__": {a: 1}\n', 'declines'],
  ['__proto__ in a flow mapping', 'a: {__proto__: 1}\n', 'declines'],
  ['constructor and toString as keys', 'constructor: a\ntoString: b\nhasOwnProperty: c\n', 'agrees'],
  ['merge key <<', 'a: {x: 1}\nb:\n  <<: {y: 2}\n', 'declines'],
  ['complex key ?', '? a\n: b\n', 'declines'],
  ['a key and its quoted twin', 'a: 1\n"a": 2\n', 'declines'],
  ["a key and its single-quoted twin", "'a': 1\na: 2\n", 'declines'],
  ['duplicate key in a flow mapping', 'a: {b: 1, b: 2}\n', 'declines'],
  ['NUL byte', 'a: b\u0000\n', 'declines'],
  ['byte-order mark in the middle', 'a: b\n\ufeffc: d\n', 'declines'],
  ['lone CR', 'a: b\rc: d\n', 'declines'],
  ['U+2028 line separator', 'a: b\u2028c\n', 'declines'],
  ['U+0085 next line', 'a: b\u0085c\n', 'declines'],
  ['tab after a value', 'a: b\t\n', 'declines'],
  ['YAML 1.1 booleans are strings in 1.2', 'a: yes\nb: no\nc: on\nd: off\ne: y\n', 'agrees'],
  ['15-digit integer', 'a: 123456789012345\n', 'agrees'],
  ['16-digit integer (past 2^53 soon)', 'a: 1234567890123456\n', 'declines'],
  ['-0', 'a: -0\n', 'declines'],
  ['octal-looking 0755', 'a: 0755\n', 'declines'],
  ['.inf and .nan', 'a: .inf\nb: .nan\n', 'declines'],
  ['a 1 MB scalar', `a: ${'x'.repeat(1 << 20)}\n`, 'agrees'],
  ['1,000 top-level keys', `${Array.from({ length: 1_000 }, (_, i) => `k${i}: ${i}`).join('\n')}\n`, 'agrees'],
  ['a 1,000-item list', `l:\n${Array.from({ length: 1_000 }, (_, i) => `  - n${i}`).join('\n')}\n`, 'agrees'],
  ['no newline at the end', 'a:\n  - b', 'agrees'],
  ['CRLF throughout', 'a:\r\n  - b: 1\r\n    c: [1, 2]\r\n', 'agrees'],
  ['comment glued to a value', 'a: b#c\nd: e #f\n', 'agrees'],
  ['comment glued to a quoted value', 'a: "b"#c\n', 'declines'],
  ['flow list in a flow list', 'a: [[1]]\n', 'declines'],
  ['flow mapping in a flow mapping', 'a: {b: {c: 1}}\n', 'declines'],
  ['trailing comma', 'a: [1, 2, ]\n', 'declines'],
  ['flow collection over two lines', 'a: [1,\n  2]\n', 'declines'],
  ['escape in double quotes', 'a: "\\u0041"\n', 'declines'],
  ['doubled single quote', "a: 'it''s'\n", 'agrees'],
  ['unclosed quote', 'a: "b\n', 'declines'],
  ['item at the wrong indent', 'a:\n  - b\n - c\n', 'declines'],
  ['mapping then list at the same column', 'a:\n  b: 1\n  - c\n', 'declines'],
  ['key: value: value', 'a: b: c\n', 'declines'],
  ['document end marker', 'a: b\n...\n', 'declines'],
  ['two documents', 'a: b\n---\nc: d\n', 'declines'],
  ['a list at the top', '- a\n- b\n', 'declines'],
  ['an empty file', '', 'declines'],
  ['a scalar at the top', 'just text\n', 'declines'],
  ['null value', 'a:\nb: 1\n', 'declines'],
  ['tag', 'a: !!binary aGk=\n', 'declines'],
  ['anchor on a key', '&k a: b\n', 'declines'],
];

describe('hostile and surprising inputs: the fast path declines or agrees with yaml', () => {
  for (const [name, input, outcome] of hostile) {
    it(`${name}: ${outcome}`, () => {
      expect(compare(input)).toBe(outcome);
    });
  }

  it('a file over the size limit is declined (readYaml refuses it with a diagnostic)', () => {
    const input = `a: ${'x'.repeat(200)}\n`;
    expect(readPlainYaml(input, 'a.yaml', 100)).toBeUndefined();
    expect(readYaml(input, 'a.yaml', 100).errors.map((d) => d.code)).toEqual(['file_too_large']);
  });
});
