import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exportHeader, schemaRefFor } from '../../../src/app/index.js';
import type { ActualState } from '../../../src/model/index.js';
import { desiredFromActual, parseDesired, stringifyDesired } from '../../../src/desired/index.js';
import { plan } from '../../../src/plan/index.js';
import { actual } from '../../helpers/plan-fixtures.js';

/** What `amsync export` writes, parsed back as `amsync plan` would, and planned against the source. */
function roundTrip(state: ActualState): { text: string; changes: number; problems: number; unmanaged: number } {
  const exported = desiredFromActual(state);
  const text = `${exportHeader('http://127.0.0.1:8080', 'access.schema.json', exported)}\n\n${stringifyDesired(exported.desired, { omitDefaults: true })}`;
  const parsed = parseDesired(text, { file: 'export.yaml', env: {}, readSecretFile: () => new Error('none') });
  expect(parsed.errors).toEqual([]);
  const p = plan(parsed.value!, state, { prune: parsed.value!.prune, isProtected: () => false, passwords: { mode: 'create-only' } });
  return { text, changes: p.changes.length, problems: p.problems.length, unmanaged: p.unmanaged.length };
}

describe('the actual state as a desired-state file', () => {
  it('declares every item without secrets or defaults, in a deterministic order', () => {
    const state = actual(
      [{ id: 2, username: 'zed', level: 'n1' }, { id: 1, username: 'alice', level: 'n2' }],
      [{ id: 5, name: 'ci', superuser: false, roles: [3, 1] }, { id: 4, name: 'admin', superuser: true, roles: [] }],
    );
    const { text, changes, problems, unmanaged } = roundTrip(state);
    expect(text.slice(text.indexOf('sshUsers:'))).toBe(
      ['sshUsers:', '  - username: alice', '    level: n2', '  - username: zed', 'apikeys:', '  - name: admin', '    superuser: true', '  - name: ci', '    roles: [ 1, 3 ]', ''].join('\n'),
    );
    expect([changes, problems, unmanaged]).toEqual([0, 0, 0]);
  });

  it('pins apikeys that share a name with `id:`, so each is managed and none is ambiguous', () => {
    const state = actual([], [{ id: 9, name: 'ci', superuser: false, roles: [] }, { id: 3, name: 'ci', superuser: true, roles: [2] }, { id: 4, name: 'solo', superuser: false, roles: [] }]);
    const exported = desiredFromActual(state);
    expect(exported.desired.apikeys.map((k) => [k.name, k.id])).toEqual([['ci', 3], ['ci', 9], ['solo', undefined]]);
    expect(exported.pinned).toBe(2);
    expect(roundTrip(state)).toMatchObject({ changes: 0, problems: 0, unmanaged: 0 });
  });

  it('leaves out, and names in the header, what a desired-state file cannot declare', () => {
    const state = actual([{ id: 1, username: ' padded', level: 'n1' }, { id: 2, username: 'x\n# injected: true', level: 'n1' }], []);
    const { text, changes, problems, unmanaged } = roundTrip(state);
    expect(text).toContain('#     sshUser " padded" (id 1): its name has leading or trailing spaces');
    expect(text).not.toMatch(/^# injected/m);
    expect([changes, problems, unmanaged]).toEqual([0, 0, 1]);
  });

  it('starts with the schema line and says why there are no passwords', () => {
    const header = exportHeader('https://access.example.com/base/', '../config/access.schema.json', desiredFromActual(actual()));
    expect(header.split('\n')[0]).toBe('# yaml-language-server: $schema=../config/access.schema.json');
    expect(header).toContain('The actual state of https://access.example.com/base as a desired-state file');
    expect(header).toContain('No secrets: passwords are write-only');
  });

  it('points $schema at the installed schema only by a path that means something in a repository', () => {
    expect(schemaRefFor('/repo', '/repo/node_modules/amsync/config/access.schema.json')).toBe('node_modules/amsync/config/access.schema.json');
    expect(schemaRefFor('/repo/access', '/repo/node_modules/amsync/config/access.schema.json')).toBe('../node_modules/amsync/config/access.schema.json');
    // Anything else resolves nowhere an editor looks: no reference rather than a broken one.
    expect(schemaRefFor('/repo/amsync/examples', '/repo/amsync/config/access.schema.json')).toBeUndefined();
    expect(schemaRefFor('/home/me/infra', '/usr/lib/amsync/config/access.schema.json')).toBeUndefined();
  });

  // The import round trip for any listing the service can hold: the export validates and plans
  // zero changes. Names are chosen to trip YAML (yes, 123, "- x", '#x') and to collide.
  it('plans zero changes against the listing it came from, whatever the listing', () => {
    const names = fc.oneof(fc.constantFrom('yes', 'null', '123', '- x', '#x', 'a: b', ' lead', 'trail ', 'ünï', '"q"', 'ci', 'ci'), fc.string({ minLength: 0, maxLength: 8 }));
    const listing = fc.record({
      sshUsers: fc.uniqueArray(fc.record({ id: fc.integer({ min: 1, max: 500 }), username: names, level: fc.constantFrom('n1', 'n2') }), { selector: (u) => u.id, maxLength: 8 }),
      apikeys: fc.uniqueArray(
        fc.record({ id: fc.integer({ min: 1, max: 500 }), name: names, superuser: fc.boolean(), roles: fc.uniqueArray(fc.integer({ min: 1, max: 9 }), { maxLength: 4 }).map((r) => r.sort((a, b) => a - b)) }),
        { selector: (k) => k.id, maxLength: 8 },
      ),
    });
    fc.assert(
      fc.property(listing, (state) => {
        const r = roundTrip(state);
        expect([r.changes, r.problems]).toEqual([0, 0]);
      }),
      { numRuns: 200 },
    );
  });
});
