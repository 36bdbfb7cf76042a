import { describe, expect, it } from 'vitest';
import { apiApikeySchema, apiSshUserSchema, sshUserPageSchema } from '../../../src/api/schemas.js';
import { Secret } from '../../../src/secrets/secret.js';

describe('response schemas accept fields they do not know', () => {
  it('an SSH user with created_at, updated_at and more', () => {
    expect(apiSshUserSchema.parse({ id: 1, username: 'a', level: 'n1', created_at: '2024-01-01T00:00:00Z', updated_at: null, shell: '/bin/sh' })).toEqual({
      id: 1,
      username: 'a',
      level: 'n1',
      createdAt: '2024-01-01T00:00:00Z',
    });
  });

  it('an apikey: Role objects become sorted unique ids, the token a Secret', () => {
    const key = apiApikeySchema.parse({
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
    expect(apiApikeySchema.parse({ id: 2, name: 'k', superuser: false, roles: [] }).token).toBeUndefined();
  });

  it('a missing superuser is an error, not a silent false', () => {
    expect(apiApikeySchema.safeParse({ id: 2, name: 'k', roles: [] }).success).toBe(false);
  });

  it('a page needs cursor.next (null on the last page)', () => {
    expect(sshUserPageSchema.safeParse({ cursor: { current: 0, next: null, previous: null }, users: [] }).success).toBe(true);
    expect(sshUserPageSchema.safeParse({ cursor: { current: 0 }, users: [] }).success).toBe(false);
    expect(sshUserPageSchema.safeParse({ users: [] }).success).toBe(false);
  });
});
