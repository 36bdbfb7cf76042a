import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { apikeySchema, sshUserSchema, apikeyPageSchema, isWireApikey, isWireSshUser, sshUserPageSchema } from '../../../src/api/schemas.js';
import { Secret } from '../../../src/secrets/secret.js';


describe('response schemas accept fields they do not know', () => {
  it('an SSH user with created_at, updated_at and more: the model item, the rest dropped', () => {
    expect(sshUserSchema.parse({ id: 1, username: 'a', level: 'n1', created_at: '2024-01-01T00:00:00Z', updated_at: null, shell: '/bin/sh' })).toEqual({
      id: 1,
      username: 'a',
      level: 'n1',
    });
  });

  it('an apikey: Role objects become sorted unique ids, the token a Secret', () => {
    const key = apikeySchema.parse({
      id: 2,
      name: 'k',
      superuser: true,
      roles: [{ id: 7, name: 'b', extra: true }, { id: 3, name: 'a' }, 7],
      token: 'tok',
      owner: 'x',
    });
    expect(key.roles).toEqual([3, 7]);
    expect(key.token).toBeInstanceOf(Secret);
    expect(key.token?.reveal()).toBe('tok');
  });

  it('an apikey without a token parses, with token undefined', () => {
    expect(apikeySchema.parse({ id: 2, name: 'k', superuser: false, roles: [] }).token).toBeUndefined();
  });

  it('a missing superuser is an error, not a silent false', () => {
    expect(apikeySchema.safeParse({ id: 2, name: 'k', roles: [] }).success).toBe(false);
  });

  it('a page needs cursor.next (null on the last page)', () => {
    expect(sshUserPageSchema.safeParse({ cursor: { current: 0, next: null, previous: null }, users: [] }).success).toBe(true);
    expect(sshUserPageSchema.safeParse({ cursor: { current: 0 }, users: [] }).success).toBe(false);
    expect(sshUserPageSchema.safeParse({ users: [] }).success).toBe(false);
  });
});

describe('listed items: the precompiled checks accept only what zod accepts', () => {
  const value = fc.oneof(
    fc.constant(undefined),
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double(),
    fc.constantFrom(2 ** 53, -0, 1.5, Number.NaN),
    fc.string(),
    fc.array(fc.oneof(fc.integer(), fc.record({ id: fc.oneof(fc.integer(), fc.string(), fc.double()), name: fc.string() }, { requiredKeys: [] }))),
  );
  // Mostly well-formed fields, so that whole items often pass, with any value mixed in.
  const field = (valid: fc.Arbitrary<unknown>) => fc.oneof({ weight: 6, arbitrary: valid }, { weight: 1, arbitrary: value });
  const role = fc.oneof(fc.nat(), fc.record({ id: fc.nat(), name: fc.string() }));
  const item = fc.record(
    {
      id: field(fc.nat()),
      username: field(fc.string()),
      level: field(fc.constant('n1')),
      name: field(fc.string()),
      superuser: field(fc.boolean()),
      roles: field(fc.array(role, { maxLength: 4 })),
      token: field(fc.oneof(fc.string(), fc.constant(null))),
      created_at: field(fc.constant('2024-01-01T00:00:00Z')),
      updated_at: field(fc.constant(null)),
    },
    { requiredKeys: ['id'] },
  );
  const wireUser = sshUserPageSchema;
  const wireKey = apikeyPageSchema;

  it('an item the check passes parses with zod too, to the same value', () => {
    let passed = 0;
    fc.assert(
      fc.property(fc.oneof({ weight: 9, arbitrary: item }, { weight: 1, arbitrary: value }), (candidate) => {
        const page = (key: string) => ({ cursor: { next: null }, [key]: [candidate] });
        if (isWireSshUser(candidate)) {
          passed += 1;
          expect(sshUserSchema.parse(candidate)).toEqual(wireUser.parse(page('users')).items[0]);
        }
        if (isWireApikey(candidate)) {
          passed += 1;
          const viaZod = apikeySchema.parse(candidate);
          const viaCheck = wireKey.parse(page('apikeys')).items[0]!;
          expect({ ...viaCheck, token: viaCheck.token?.reveal() }).toEqual({ ...viaZod, token: viaZod.token?.reveal() });
        }
      }),
      { numRuns: 3000 },
    );
    expect(passed).toBeGreaterThan(300);
  });

  it('an item the check refuses is decided by zod, which names the field', () => {
    const result = sshUserPageSchema.safeParse({ cursor: { next: null }, users: [{ id: 1, username: 'a', level: 'n1' }, { id: 2, username: 7, level: 'n1' }] });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]).toMatchObject({ path: ['users', 1, 'username'], message: expect.stringContaining('expected string') });
    // Zod's own rules still apply to what the check does not know: an unsafe integer id is refused.
    expect(sshUserPageSchema.safeParse({ cursor: { next: null }, users: [{ id: 2 ** 53, username: 'a', level: 'n1' }] }).success).toBe(false);
  });
});
