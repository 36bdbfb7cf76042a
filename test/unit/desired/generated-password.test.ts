import { describe, expect, it } from 'vitest';
import { desiredFileSchema } from '../../../src/desired/desired-schema.js';
import { quickCheckDesired } from '../../../src/desired/quick-check.js';
import { parse } from './parse-helper.js';

describe('password: {generate} and rotate: in the desired file', () => {
  it('reads the recipe, the classes (default all four) and the rotation period', () => {
    const r = parse('sshUsers:\n  - username: a\n    password: { generate: { length: 32 } }\n    rotate: { every: 30d }\n  - username: b\n    password: { generate: { length: 12, classes: [digit, lower, digit] } }\n');
    expect(r.errors).toEqual([]);
    const [a, b] = r.value!.sshUsers;
    expect(a!.password).toBeUndefined();
    expect(a!.passwordGenerated).toEqual({ length: 32, classes: ['lower', 'upper', 'digit', 'symbol'], rotateEveryMs: 30 * 86_400_000, rotateEvery: '30d' });
    expect(b!.passwordGenerated).toEqual({ length: 12, classes: ['digit', 'lower'] });
  });

  it('rotate: without a generated password is an error at the rotate key', () => {
    const r = parse('sshUsers:\n  - username: a\n    password: { env: DEPLOY_PASSWORD }\n    rotate: { every: 30d }\n');
    expect(r.errors.map((e) => [e.path, e.position?.line, e.position?.col, e.message.slice(0, 50)])).toEqual([['sshUsers[0].rotate', 4, 5, '`rotate:` needs a password amsync generates: write']]);
  });

  it('a bad duration, a short length, an unknown class, an unknown key: errors with positions', () => {
    const r = parse('sshUsers:\n  - username: a\n    password: { generate: { length: 8, classes: [emoji] } }\n    rotate: { every: 30 days }\n  - username: b\n    password: { generate: { length: 20, size: 3 } }\n');
    const lines = r.errors.map((e) => `${e.position?.line}: ${e.message}`);
    expect(lines.some((l) => l.startsWith('3:') && l.includes('12'))).toBe(true);
    expect(lines.some((l) => l.startsWith('3:') && l.includes("expected one of 'lower', 'upper', 'digit', 'symbol'"))).toBe(true);
    expect(lines.some((l) => l.startsWith('4:') && l.includes('is not a duration'))).toBe(true);
    expect(lines.some((l) => l.startsWith('6:') && l.includes('size'))).toBe(true);
  });

  // Apikeys rotate by a successor since issue 30's key rotation (rotate: {every, overlap}): only
  // those two keys are theirs, and `overlap` is not a generated password's.
  it('rotate: on apikeys takes every and overlap only; a generated password takes no overlap', () => {
    expect(parse('apikeys:\n  - name: k\n    rotate: { every: 30d, length: 3 }\n').errors.length).toBeGreaterThan(0);
    expect(parse('apikeys:\n  - name: k\n    rotate: { every: 30d, overlap: 1h }\n').errors).toEqual([]);
    expect(parse('sshUsers:\n  - username: a\n    password: { generate: { length: 32 } }\n    rotate: { every: 30d, overlap: 1h }\n').errors.length).toBeGreaterThan(0);
  });

  it('the quick check leaves these files to zod (it declines), and zod accepts them', () => {
    const raw = { sshUsers: [{ username: 'a', password: { generate: { length: 32 } }, rotate: { every: '1d' } }] };
    expect(quickCheckDesired(raw)).toBeUndefined();
    expect(desiredFileSchema().safeParse(raw).success).toBe(true);
  });
});
