import { describe, expect, it } from 'vitest';
import type { DesiredState, NamedRole } from '../../../src/model/index.js';
import { namesOf, resolveRoleNames, usesRoleNames } from '../../../src/desired/index.js';
import { parse } from './parse-helper.js';

/**
 * Roles by name in the desired file (`roles: [auditor, 7]`, DESIGN.md §3): read with their
 * positions, resolved against the service's roles before anything is planned, and every name
 * that does not name exactly one role reported at file:line:col with the roles that exist.
 */

const roles: NamedRole[] = [
  { id: 1, name: 'viewer' },
  { id: 3, name: 'auditor' },
  { id: 7, name: 'billing' },
  { id: 8, name: 'ops' },
  { id: 9, name: 'ops' },
];

function desired(text: string): DesiredState {
  const parsed = parse(text);
  expect(parsed.errors).toEqual([]);
  return parsed.value!;
}

describe('role names in the desired file', () => {
  it('are kept apart from ids, with where each was written; duplicates warn', () => {
    const parsed = parse('apikeys:\n  - name: ci\n    roles: [auditor, 7, billing, auditor]\n');
    expect(parsed.errors).toEqual([]);
    const key = parsed.value!.apikeys[0]!;
    expect(key.roles).toEqual([7]);
    expect(key.roleNames).toEqual([
      { name: 'auditor', source: { file: 'access.yaml', line: 3, col: 13 } },
      { name: 'billing', source: { file: 'access.yaml', line: 3, col: 25 } },
    ]);
    expect(parsed.warnings.map((w) => [w.code, w.message])).toEqual([['duplicate_role', "role 'auditor' is listed twice; roles are a set, so once is enough"]]);
  });

  it('a file of ids only has no role names and needs no listing', () => {
    const d = desired('apikeys:\n  - name: ci\n    roles: [3, 1]\n');
    expect(d.apikeys[0]).not.toHaveProperty('roleNames');
    expect(usesRoleNames(d)).toBe(false);
    expect(usesRoleNames(desired('apikeys:\n  - name: ci\n    roles: [viewer]\n'))).toBe(true);
  });

  it('refuses what is neither an id nor a name, in plain words', () => {
    const cases: [string, string][] = [
      ['[{ id: 1 }]', 'expected a role id (a whole number) or a role name (a string), got a mapping'],
      ['[true]', 'expected a role id (a whole number) or a role name (a string), got true'],
      ['[" admin"]', "role name ' admin' has leading or trailing spaces"],
      ['[""]', 'must not be empty'],
      ['["7"]', "expected a whole number, got the string '7' — remove the quotes"],
    ];
    for (const [roles, message] of cases) {
      const parsed = parse(`apikeys:\n  - name: ci\n    roles: ${roles}\n`);
      expect(parsed.errors.map((e) => e.message), roles).toEqual([message]);
      expect(parsed.errors[0]!.position).toMatchObject({ line: 3, col: 13 });
    }
  });
});

describe('resolving role names against the service', () => {
  it('turns names into ids, as a set with the ids written, and knows every unique name', () => {
    const result = resolveRoleNames(desired('apikeys:\n  - name: ci\n    roles: [billing, 3, auditor]\n  - name: plain\n    roles: [1]\n'), roles);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.desired.apikeys.map((k) => k.roles)).toEqual([[3, 7], [1]]);
    expect(result.desired.apikeys.every((k) => k.roleNames === undefined)).toBe(true);
    expect([...result.roleNames]).toEqual([
      [1, 'viewer'],
      [3, 'auditor'],
      [7, 'billing'],
    ]);
  });

  it('an unknown name is an error at file:line:col listing the roles there are, with a suggestion', () => {
    const result = resolveRoleNames(desired('apikeys:\n  - name: ci\n    roles: [auditr]\n'), roles);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.message).toBe('1 role name cannot be resolved; nothing was written');
    expect(result.diagnostics).toEqual([
      {
        severity: 'error',
        code: 'unknown_role',
        message: "no role named 'auditr' — did you mean 'auditor'?; the service has these roles: 1 'viewer', 3 'auditor', 7 'billing', 8 'ops', 9 'ops'",
        path: 'apikeys[0].roles',
        position: { file: 'access.yaml', line: 3, col: 13 },
      },
    ]);
  });

  it('a name two roles share is ambiguous: write the id', () => {
    const result = resolveRoleNames(desired('apikeys:\n  - name: ci\n    roles: [ops, viewer]\n'), roles);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.diagnostics.map((d) => [d.code, d.message, d.position?.col])).toEqual([['ambiguous_role', "role name 'ops' is ambiguous: roles 8 and 9 are all named so; write the id instead", 13]]);
  });

  it('a service without a roles listing (404): each name is an error that suggests ids', () => {
    const result = resolveRoleNames(desired('apikeys:\n  - name: ci\n    roles: [viewer, 3]\n'), null);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.message).toMatch(/no roles listing; use role ids/);
    expect(result.diagnostics).toHaveLength(1);
    expect(result.diagnostics[0]).toMatchObject({ code: 'role_names_unsupported', position: { line: 3, col: 13 } });
    expect(result.diagnostics[0]!.message).toMatch(/GET \/api\/roles answered 404.*write the role's id instead/);
  });

  it('a long list of roles is cut in the message', () => {
    const many = Array.from({ length: 50 }, (_, i) => ({ id: i + 1, name: `role-${i + 1}` }));
    const result = resolveRoleNames(desired('apikeys:\n  - name: ci\n    roles: [nope]\n'), many);
    expect(result.ok ? '' : result.diagnostics[0]!.message).toMatch(/20 'role-20' and 30 more$/);
  });

  it('namesOf leaves out names two roles share', () => {
    expect([...namesOf(roles).keys()]).toEqual([1, 3, 7]);
  });
});
