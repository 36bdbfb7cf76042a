import { describe, expect, expectTypeOf, it } from 'vitest';
import * as z from 'zod';
import { contentHash, wireFields } from '../../../src/api/resource-definitions.js';
import { checkOf, toItem, wireItem } from '../../../src/api/schemas.js';
import { bodyOf, newOf } from '../../../src/apply/request-body.js';
import { desiredItemSchema } from '../../../src/desired/desired-schema.js';
import { itemCheck } from '../../../src/desired/quick-check.js';
import { sameDeclaredItem } from '../../../src/desired/same-declared-item.js';
import { itemLines } from '../../../src/desired/stringify-desired.js';
import type { ActualOf, BodyOf, DesiredApikey, FieldChangesOf, KindDeclaration } from '../../../src/model/index.js';
import { apikeyKind, listedRow } from '../../../src/model/index.js';
import { createFieldChanges, deleteFieldChanges, updateFieldChanges } from '../../../src/plan/field-changes.js';
import { fieldsSchema, listedSchema } from '../../../src/saved-plan/saved-plan-schema.js';
import { listedFieldChanges } from '../../../src/saved-plan/state-diff.js';

/**
 * The target of issue 28: a new plain field is one row in its kind's declaration (plus the
 * emulator, which is an independent fake and does not read the declarations). A copy of the
 * apikey declaration with one field more, `note` (`note_text` on the wire, default `none`),
 * must reach every view derived from it without any other change.
 */
const withNote = {
  ...apikeyKind,
  fields: {
    ...apikeyKind.fields,
    note: { type: 'text', wire: 'note_text', default: 'none', sensitive: false, writeOnly: false, updatable: true, compare: 'exact', description: 'A note (a field of this test only).' },
  },
} as const satisfies KindDeclaration;

type NoteKind = typeof withNote;
const listed: ActualOf<NoteKind> = { id: 7, name: 'ci', superuser: false, roles: [3, 1], note: 'hello' };
const declared = { name: 'ci', superuser: false, roles: [1, 3], note: 'bye', ensure: 'present' } as const;

describe('a field added to a kind declaration reaches every derived view', () => {
  it('the types: the actual item, a request body and a change carry it (tsc checks these)', () => {
    expectTypeOf<ActualOf<NoteKind>['note']>().toEqualTypeOf<string>();
    expectTypeOf<BodyOf<NoteKind>['note']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<NonNullable<FieldChangesOf<NoteKind>['note']>['after']>().toEqualTypeOf<string | null>();
  });

  it('the desired file: zod and the quick check read it, with its default; the JSON Schema describes it', () => {
    const schema = desiredItemSchema(withNote);
    expect(schema.parse({ name: 'ci', note: 'hello' })).toMatchObject({ name: 'ci', note: 'hello', superuser: false, roles: [] });
    expect(schema.parse({ name: 'ci' })).toMatchObject({ note: 'none' });
    expect(schema.safeParse({ name: 'ci', note: 5 }).success).toBe(false);
    expect(itemCheck(withNote).check({ name: 'ci', note: 'hello' })).toEqual(schema.parse({ name: 'ci', note: 'hello' }));
    expect(itemCheck(withNote).keys.has('note')).toBe(true);
    const json = z.toJSONSchema(schema as z.ZodType, { io: 'input', target: 'draft-7' }) as { properties: Record<string, { description?: string }> };
    expect(Object.keys(json.properties)).toEqual(['name', 'id', 'superuser', 'roles', 'note', 'ensure', 'targets', 'renamedFrom', 'ignore', 'mode', 'expires', 'ttl', 'rotate']);
    expect(json.properties.note?.description).toBe('A note (a field of this test only).');
  });

  it('the wire: the listing schema, its precompiled check and the conversion use the wire name', () => {
    const raw = { id: 7, name: 'ci', superuser: false, roles: [{ id: 3 }, 1], note_text: 'hello', created_at: null };
    expect(toItem(withNote)(wireItem(withNote).parse(raw) as typeof raw)).toEqual({ ...listed, roles: [1, 3] });
    expect(checkOf(withNote)(raw)).toBe(true);
    expect(checkOf(withNote)({ ...raw, note_text: 5 })).toBe(false);
    expect(wireItem(withNote).safeParse({ ...raw, note_text: 5 }).success).toBe(false);
    expect(contentHash(withNote, listed)).not.toBe(contentHash(withNote, { ...listed, note: 'other' }));
  });

  it('request bodies: an update sends it under its wire name; a create fills in its default', () => {
    const body = bodyOf(withNote, 'ci', { note: { before: 'hello', after: 'bye' } }, undefined);
    expect(body).toEqual({ note: 'bye' });
    expect(JSON.parse(JSON.stringify(wireFields(withNote, body)))).toEqual({ note_text: 'bye' });
    expect(newOf(withNote, 'ci', {})).toEqual({ name: 'ci', superuser: false, roles: [], note: 'none' });
  });

  it("the plan's changes, the fingerprint's row and the saved plan's state diff", () => {
    expect(createFieldChanges(withNote, declared)).toMatchObject({ note: { before: null, after: 'bye' } });
    expect(updateFieldChanges(withNote, declared, listed).fields).toEqual({ note: { before: 'hello', after: 'bye' } });
    expect(deleteFieldChanges(withNote, listed)).toMatchObject({ note: { before: 'hello', after: null } });
    expect(listedRow(withNote, listed)).toEqual([7, 'ci', false, [1, 3], 'hello']);
    expect(listedFieldChanges(withNote, listed, { ...listed, note: 'bye' })).toEqual({ note: { before: 'hello', after: 'bye' } });
  });

  it('the saved plan: a change of it and a listed item with it are read; without it the item is refused', () => {
    expect(fieldsSchema(withNote).parse({ note: { before: 'hello', after: 'bye' } })).toEqual({ note: { before: 'hello', after: 'bye' } });
    expect(fieldsSchema(withNote).safeParse({ note: { before: 1, after: 'bye' } }).success).toBe(false);
    expect(listedSchema(withNote).parse(listed)).toEqual(listed);
    const { note: _note, ...withoutNote } = listed;
    expect(listedSchema(withNote).safeParse(withoutNote).success).toBe(false);
  });

  it('stringify writes it (left out when it is its default and defaults are omitted); export compares it', () => {
    const item = { ...declared, note: 'hello' } as unknown as DesiredApikey;
    expect(itemLines(withNote, item, {})).toBe('  - name: ci\n    superuser: false\n    roles: [ 1, 3 ]\n    note: hello\n');
    expect(itemLines(withNote, { ...item, note: 'none' } as DesiredApikey, { omitDefaults: true })).toBe('  - name: ci\n    roles: [ 1, 3 ]\n');
    expect(sameDeclaredItem(withNote, item, { ...item, note: 'other' } as DesiredApikey)).toBe(false);
    expect(sameDeclaredItem(withNote, item, { ...item } as DesiredApikey)).toBe(true);
  });
});
