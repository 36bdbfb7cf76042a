import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDocument, type ErrorCode } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../../helpers/in-process.js';

const dir = mkdtempSync(join(tmpdir(), 'amsync-yaml-errors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Indentation and structure mistakes, the code the yaml library gives each, and what amsync says instead. */
const table: readonly { name: string; yaml: string; yamlCode: ErrorCode; library: string; says: string; at: string }[] = [
  { name: 'a key of a list item indented one space short', yaml: 'sshUsers:\n  - username: a\n    password: x\n   role: 3\n', yamlCode: 'MISSING_CHAR', library: 'without - indicator', says: "this line is not lined up with the keys of the list item above it and does not start with '- '", at: '4:1' },
  { name: 'an unclosed quote', yaml: 'sshUsers:\n  - username: "a\n', yamlCode: 'MISSING_CHAR', library: 'Missing closing', says: 'a quoted value is not closed', at: '3:1' },
  { name: 'a key indented less than its siblings', yaml: 'sshUsers:\n  - username: a\n  password: x\n', yamlCode: 'BAD_INDENT', library: 'All mapping items', says: 'this key is not lined up with the keys above it', at: '3:1' },
  { name: "a '-' not lined up", yaml: 'sshUsers:\n  - username: a\n  - username: b\n    password: x\n   - username: c\n', yamlCode: 'BAD_INDENT', library: 'All sequence items', says: "this list item's '-' is not lined up", at: '5:4' },
  { name: 'an unclosed flow list', yaml: 'apikeys:\n  - name: a\n    roles: [1, 2\n', yamlCode: 'BAD_INDENT', library: 'Flow sequence', says: 'a list in [ ] or a mapping in { } is not closed', at: '4:1' },
  { name: 'a key indented deeper than the one above', yaml: 'sshUsers:\n  - username: a\n      role: 3\n', yamlCode: 'BLOCK_AS_IMPLICIT_KEY', library: 'Nested mappings', says: 'a line is indented deeper than the key above it', at: '2:15' },
  { name: 'a missing colon', yaml: 'sshUsers:\n  - username a\n    role: 3\n', yamlCode: 'MULTILINE_IMPLICIT_KEY', library: 'Implicit keys', says: 'a key runs over more than one line', at: '2:5' },
  { name: 'a stray bracket', yaml: 'sshUsers: []\n]\n', yamlCode: 'UNEXPECTED_TOKEN', library: 'Unexpected', says: 'something here does not fit the structure around it', at: '2:1' },
  { name: "a '- ' list inside [ ]", yaml: 'sshUsers: [\n  - username: a ]\n', yamlCode: 'BLOCK_IN_FLOW', library: 'Block collections', says: "items with '- ' or a mapping over several lines cannot stand inside [ ] or { }", at: '2:3' },
  { name: 'a value starting with @', yaml: 'sshUsers:\n  - username: @a\n', yamlCode: 'BAD_SCALAR_START', library: 'reserved character', says: 'a value cannot start with @ or ` unquoted', at: '2:15' },
];

describe('a YAML indentation or structure mistake is said in words a user understands, at file:line:col', () => {
  it.each(table)('$name ($yamlCode)', async ({ name, yaml, yamlCode, library, says, at }) => {
    // The library says it its way: the case is the mistake the row claims.
    expect(parseDocument(yaml).errors.map((e) => [e.code, e.message])[0]).toEqual([yamlCode, expect.stringContaining(library)]);
    const file = join(dir, `${name.replace(/\W+/g, '-')}.yaml`);
    writeFileSync(file, yaml);
    const run = await runInProcess(['validate', '-f', file]);
    expect(run.code).toBe(65);
    expect(run.stderr).toContain(`${file}:${at}: error: ${says}`);
    expect(run.stderr).toContain(`(YAML ${yamlCode})`);
    expect(run.stderr).not.toContain(library);
  });
});
