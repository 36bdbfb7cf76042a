import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { PositionsNeeded, readPlainYaml } from '../../../src/yaml/plain-yaml.js';
import { readYaml } from '../../../src/yaml/yaml-source.js';
import { parse } from '../desired/parse-helper.js';

/**
 * readPlainYaml is a fast path of readYaml for plain files: where it returns a value, that value
 * and every list item's position must be readYaml's; anything else it must decline.
 */
function expectSameAsYaml(text: string): boolean {
  const plain = readPlainYaml(text, 'access.yaml');
  if (plain === undefined) return false;
  const full = readYaml(text, 'access.yaml');
  expect(full.errors, text).toEqual([]);
  expect(full.warnings, text).toEqual([]);
  expect(plain.value, text).toEqual(full.source!.value);
  for (const [key, value] of Object.entries(plain.value as Record<string, unknown>)) {
    if (!Array.isArray(value)) continue;
    value.forEach((_, i) => {
      // Only block lists keep positions (a flow list of mappings is declined, so a valid
      // file's items are always in one); asking otherwise is answered by a fallback.
      let position;
      try {
        position = plain.locate([key, i]);
      } catch (error) {
        expect(error).toBeInstanceOf(PositionsNeeded);
        return;
      }
      expect(position, `${key}[${i}] in\n${text}`).toEqual(full.source!.locate([key, i]));
    });
  }
  return true;
}

const plainFiles = {
  block: 'sshUsers:\n  - username: deploy\n    level: n1\n    password: { env: DEPLOY_PASSWORD }\napikeys:\n  - name: ci\n    roles: [2, 1]\n',
  compactLists: 'sshUsers:\n- username: a\n- username: b\n  ensure: absent\napikeys:\n- name: k\n  roles:\n  - 1\n  - 3\n',
  commentsAndBlankLines: '# header\n\nsshUsers: # the users\n\n  # first\n  - username: a # trailing\n    level: n1   \n\napikeys: []\n# end\n',
  quoted: 'sshUsers:\n  - username: "123"\n  - username: \'it\'\'s\'\n  - username: "true"\nprotect:\n  sshUsers: ["root", \'admin*\', svc-?]\n',
  crlf: 'sshUsers:\r\n  - username: a\r\n    level: n1\r\napikeys:\r\n  - name: b\r\n',
  wideIndent: 'sshUsers:\n    -   username: a\n        level: n1\n',
  flowItem: 'apikeys:\n  - { name: a, superuser: true }\n  - {name: b}\n',
  unicode: 'sshUsers:\n  - username: ünï-çødé\n',
  scalarsAsYamlReadsThem: 'prune:\n  sshUsers: True\n  apikeys: FALSE\nx:\n  a: 0\n  b: -x\n  c: a:b\n  d: a#b\n  e: n1\n  f: 007x\n  g: 12345678901234\n',
  emptyFlow: 'sshUsers: []\napikeys: []\nprotect: {}\n',
};

describe('a plain file is read without a syntax tree, to the value readYaml gives', () => {
  for (const [name, text] of Object.entries(plainFiles)) {
    it(name, () => {
      expect(expectSameAsYaml(text)).toBe(true);
    });
  }

  it('the committed examples and what `amsync export` writes', () => {
    for (const file of ['examples/access.yaml', 'examples/minimal.yaml', 'examples/all-fields.yaml']) {
      const text = readFileSync(file, 'utf8');
      expect(expectSameAsYaml(text), file).toBe(true);
    }
  });

  it('keeps list item positions only; asking for any other position throws PositionsNeeded', () => {
    const source = readPlainYaml(plainFiles.block, 'access.yaml')!;
    expect(source.locate(['sshUsers', 0])).toEqual({ file: 'access.yaml', line: 2, col: 5 });
    expect(source.locate(['apikeys', 0])).toEqual({ file: 'access.yaml', line: 6, col: 5 });
    expect(() => source.locate(['sshUsers', 0, 'level'])).toThrow(PositionsNeeded);
    expect(() => source.locate(['sshUsers', 1])).toThrow(PositionsNeeded);
    expect(() => source.locate(['sshUsers', 0], 'key')).toThrow(PositionsNeeded);
    expect(() => source.locate([])).toThrow(PositionsNeeded);
    expect(() => source.rawText(['sshUsers', 0, 'level'])).toThrow(PositionsNeeded);
  });
});

describe('anything outside the plain subset is left to readYaml', () => {
  const declined = {
    anchorAndAlias: 'a: &x [1]\nb: *x\n',
    tag: 'sshUsers:\n  - username: !!str 1\n',
    blockScalar: 'sshUsers:\n  - username: |\n      a\n',
    multiLinePlain: 'sshUsers:\n  - username: a\n      b\n',
    multiLineQuoted: 'sshUsers:\n  - username: "a\n      b"\n',
    nullValue: 'sshUsers:\n  - username: a\n    level:\n',
    tilde: 'prune: ~\n',
    float: 'x:\n  a: 1.5\n',
    hex: 'x:\n  a: 0x1F\n',
    signedInt: 'x:\n  a: +1\n',
    leadingZeros: 'x:\n  a: 0755\n',
    duplicateKey: 'sshUsers: []\nsshUsers: []\n',
    tab: 'sshUsers:\n\t- username: a\n',
    documentMarker: '---\nsshUsers: []\n',
    twoDocuments: 'sshUsers: []\n---\napikeys: []\n',
    directive: '%YAML 1.2\n---\nsshUsers: []\n',
    escape: 'sshUsers:\n  - username: "a\\tb"\n',
    itemOnNextLine: 'sshUsers:\n  -\n    username: a\n',
    nestedCompactList: 'x:\n  - - a\n',
    emptyFile: '',
    commentsOnly: '# nothing\n',
    topLevelList: '- a\n',
    badIndent: 'sshUsers:\n  - username: a\n   level: n1\n',
    unclosedFlow: 'apikeys:\n  - name: a\n    roles: [1,\n      2]\n',
    trailingComma: 'apikeys:\n  - name: a\n    roles: [1, 2, ]\n',
    nestedMappingInValue: 'sshUsers:\n  - username: a: b\n',
    controlCharacter: 'sshUsers:\n  - username: a\u0007\n',
    byteOrderMark: '\ufeffsshUsers: []\n',
    protoKey: '__proto__:\n  a: 1\n',
  };
  for (const [name, text] of Object.entries(declined)) {
    it(name, () => {
      expect(readPlainYaml(text, 'access.yaml')).toBeUndefined();
    });
  }

  it('parseDesired still reports with positions what only readYaml can position', () => {
    const result = parse('sshUsers:\n  - username: a\n    levl: n1\n  - username: a\n');
    expect(result.errors.map((d) => [d.code, d.position?.line, d.position?.col])).toEqual([
      ['unknown_key', 3, 5],
      ['duplicate_identity', 4, 15],
    ]);
  });

  it('a valid file read on the fast path has the positions readYaml would give its items', () => {
    const text = '# c\nsshUsers:\n  - username: deploy\n    password: { env: DEPLOY_PASSWORD }\napikeys:\n\n  -   name: ci\n';
    const result = parse(text);
    expect(result.errors).toEqual([]);
    expect(result.value!.sshUsers[0]!.source).toEqual({ file: 'access.yaml', line: 3, col: 5 });
    expect(result.value!.apikeys[0]!.source).toEqual({ file: 'access.yaml', line: 7, col: 7 });
  });
});

// Strings YAML reads in surprising ways, as keys and values.
const tricky = ['yes', 'no', 'null', 'Null', '~', 'true', 'False', '123', '-1', '+1', '0755', '0o17', '0x1F', '1e3', '.5', '.inf', '-.Inf', '.NaN', '- x', '#x', 'a #b', 'a#b', 'a: b', 'a:b', 'a:', '"q"', "it's", 'ünï', '@at', '*star', '&amp', '!bang', '%pct', '{x}', '[y]', 'a, b', '', ' lead', 'trail ', 'x\\y', '?q', ':c', '-', '--', '---', '...', 'a  b', '\\'];
const scalar = fc.oneof(
  fc.constantFrom(...tricky),
  fc.string({ maxLength: 8 }),
  fc.integer({ min: -5, max: 1_000_000 }),
  fc.boolean(),
  fc.constant(null),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
const key = fc.oneof(fc.constantFrom('username', 'name', 'level', 'roles', 'id', 'ensure', 'x_1', '_k'), fc.constantFrom(...tricky));
const flat = fc.oneof(scalar, fc.array(scalar, { maxLength: 4 }), fc.dictionary(key, scalar, { maxKeys: 3 }));
const item = fc.oneof(fc.dictionary(key, flat, { minKeys: 1, maxKeys: 4 }), scalar);
const document = fc.dictionary(
  fc.oneof(fc.constantFrom('sshUsers', 'apikeys', 'prune', 'protect'), key),
  fc.oneof(fc.array(item, { maxLength: 4 }), fc.dictionary(key, flat, { maxKeys: 3 }), scalar),
  { maxKeys: 4 },
);
const style = fc.record({
  indent: fc.integer({ min: 2, max: 4 }),
  indentSeq: fc.boolean(),
  collectionStyle: fc.constantFrom('any', 'block', 'flow'),
  defaultStringType: fc.constantFrom('PLAIN', 'QUOTE_DOUBLE', 'QUOTE_SINGLE'),
  flowCollectionPadding: fc.boolean(),
});

// What desired-state files hold: identifiers, names, small integers, booleans, lists of them.
const name = fc.oneof(fc.stringMatching(/^[a-z][a-z0-9.@_-]{0,12}$/), fc.constantFrom(...tricky));
const plainValue = fc.oneof(name, fc.nat({ max: 100_000 }), fc.boolean());
const plainItem = fc.dictionary(fc.constantFrom('username', 'name', 'level', 'id', 'ensure', 'superuser'), plainValue, { minKeys: 1, maxKeys: 4 })
  .chain((m) => fc.record({ roles: fc.array(fc.nat({ max: 20 }), { maxLength: 4 }), password: fc.constantFrom({ env: 'DEPLOY_PASSWORD' }, { file: 'secrets/ok' }) }, { requiredKeys: [] }).map((extra) => ({ ...m, ...extra })));
const plainDocument = fc.record(
  { sshUsers: fc.array(plainItem, { maxLength: 5 }), apikeys: fc.array(plainItem, { maxLength: 5 }), prune: fc.record({ sshUsers: fc.boolean(), apikeys: fc.boolean() }), protect: fc.record({ sshUsers: fc.array(name, { maxLength: 3 }) }) },
  { requiredKeys: [] },
);

describe('on any document, the plain reader agrees with readYaml or declines', () => {
  it('desired-state files written by yaml in every style', () => {
    let accepted = 0;
    fc.assert(
      fc.property(plainDocument, style, (doc, options) => {
        if (expectSameAsYaml(stringify(doc, { ...options, lineWidth: 0 }))) accepted += 1;
      }),
      { numRuns: 400 },
    );
    // Not vacuous: most of what yaml writes of such files is plain.
    expect(accepted).toBeGreaterThan(200);
  });

  it('any document written by yaml in every style', () => {
    fc.assert(
      fc.property(document, style, (doc, options) => {
        expectSameAsYaml(stringify(doc, { ...options, lineWidth: 0 }));
      }),
      { numRuns: 400 },
    );
  });

  it('documents with random edits never make it accept what readYaml rejects or reads otherwise', () => {
    const edits = fc.array(fc.tuple(fc.nat(), fc.constantFrom(' ', ':', '#', '-', '"', "'", '[', ']', '{', '}', ',', '\n', '\r\n', 'a', '1', '&', '*', '!', '|', '>', '~', '.', 'DEL')), { minLength: 1, maxLength: 3 });
    fc.assert(
      fc.property(fc.oneof(plainDocument, document), style, edits, (doc, options, changes) => {
        let text = stringify(doc, { ...options, lineWidth: 0 });
        for (const [at, what] of changes) {
          const i = text.length === 0 ? 0 : at % text.length;
          text = what === 'DEL' ? text.slice(0, i) + text.slice(i + 1) : text.slice(0, i) + what + text.slice(i);
        }
        expectSameAsYaml(text);
      }),
      { numRuns: 2000 },
    );
  });
});
