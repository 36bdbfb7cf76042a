import { readdirSync, readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { renderAccessSchema } from '../../../src/desired/json-schema.js';
import { renderSettingsSchema } from '../../../src/settings/settings-json-schema.js';

const accessSchemaFile = 'config/access.schema.json';
const settingsSchemaFile = 'config/settings.schema.json';
const schemaLine = '# yaml-language-server: $schema=../config/access.schema.json';

function compile(file: string): ValidateFunction {
  // validateFormats off: "uri" needs ajv-formats, and zod checks URLs itself.
  const ajv = new Ajv({ strict: true, allErrors: true, validateFormats: false });
  return ajv.compile(JSON.parse(readFileSync(file, 'utf8')) as object);
}

// Desired-state examples: the YAML files at the top of examples/ that declare access. Other
// YAML there (a compose file; ci/ and kubernetes/ folders) is not a desired-state file.
const examples = readdirSync('examples')
  .filter((f) => f.endsWith('.yaml') && /^(sshUsers|apikeys|prune|protect):/m.test(readFileSync(`examples/${f}`, 'utf8')))
  .map((f) => `examples/${f}`);

describe('the JSON Schema is generated from the zod schema and committed', () => {
  it(`${accessSchemaFile} is up to date (else: npm run build && npm run schema)`, () => {
    expect(readFileSync(accessSchemaFile, 'utf8')).toBe(renderAccessSchema());
  });

  it(`${settingsSchemaFile} is up to date (else: npm run build && npm run schema)`, () => {
    expect(readFileSync(settingsSchemaFile, 'utf8')).toBe(renderSettingsSchema());
  });
});

describe('every example validates against the committed schema (ajv)', () => {
  const validate = compile(accessSchemaFile);

  it('there are the three promised examples', () => {
    expect(examples).toEqual(expect.arrayContaining(['examples/access.yaml', 'examples/minimal.yaml', 'examples/all-fields.yaml']));
  });

  it.each(examples)('%s names the schema on its first line and is valid', (file) => {
    const text = readFileSync(file, 'utf8');
    expect(text.split('\n')[0]).toBe(schemaLine);
    const ok = validate(parseYaml(text) ?? {});
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });

  it('rejects what zod rejects: an unknown key, a password on an apikey, a bad ensure', () => {
    expect(validate({ sshUsers: [{ username: 'a', levl: 'n1' }] })).toBe(false);
    expect(validate({ apikeys: [{ name: 'a', password: 'x' }] })).toBe(false);
    expect(validate({ sshUsers: [{ username: 'a', ensure: 'gone' }] })).toBe(false);
    expect(validate({ apikeys: [{ name: 'a', id: 0 }] })).toBe(false);
    expect(validate({ sshUsers: [{ username: 'a', password: { env: 'A', file: 'b' } }] })).toBe(false);
  });

  it('config/default.yaml validates against the settings schema', () => {
    const validateSettings = compile(settingsSchemaFile);
    expect(validateSettings(parseYaml(readFileSync('config/default.yaml', 'utf8')))).toBe(true);
    expect(validateSettings({ token: 'abc' })).toBe(false);
  });
});
