import { describe, expect, it } from 'vitest';
import { parseDesired } from '../../../src/desired/index.js';

const parse = (yaml: string) => parseDesired(yaml, { file: 'access.yaml', env: {}, readSecretFile: () => new Error('none') });

// Apikey names are not unique on the service (api-spec.md), and a pinned id is an apikey's
// identity (DESIGN.md §3): `amsync export` declares same-named keys apart by `id:`.
describe('apikeys that share a name', () => {
  it('may be declared when each pins its id', () => {
    const result = parse('apikeys:\n  - { name: ci, id: 3 }\n  - { name: ci, id: 9, roles: [1] }\n');
    expect(result.errors).toEqual([]);
    expect(result.value?.apikeys.map((k) => [k.name, k.id])).toEqual([['ci', 3], ['ci', 9]]);
  });

  it('are still an error when declared twice by name alone, with a hint', () => {
    const result = parse('apikeys:\n  - name: ci\n  - name: ci\n');
    expect(result.errors.map((d) => d.code)).toEqual(['duplicate_identity']);
    expect(result.errors[0]!.message).toContain('apikeys that share a name are declared with `id:`');
  });

  it('do not relax usernames, which the service keeps unique', () => {
    const result = parse('sshUsers:\n  - { username: a, id: 1 }\n  - { username: a, id: 2 }\n');
    expect(result.errors.map((d) => d.code)).toEqual(['duplicate_identity']);
  });
});
