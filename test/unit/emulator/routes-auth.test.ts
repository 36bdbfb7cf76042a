import { describe, expect, it } from 'vitest';
import { authenticate } from '../../../src/emulator/auth.js';
import { allowedMethods, resolveRoute } from '../../../src/emulator/routes.js';

describe('routes', () => {
  it('resolve list and item URLs, tolerating one trailing slash', () => {
    expect(resolveRoute('/api/sshusers')).toEqual({ resource: 'sshUsers' });
    expect(resolveRoute('/api/sshusers/')).toEqual({ resource: 'sshUsers' });
    expect(resolveRoute('/api/sshusers/12')).toEqual({ resource: 'sshUsers', id: 12 });
    expect(resolveRoute('/api/3rdparty/apikeys/3/')).toEqual({ resource: 'apikeys', id: 3 });
    expect(resolveRoute('/api/roles')).toEqual({ resource: 'roles' });
  });

  it('know no other path, nor non-integer ids', () => {
    for (const p of ['/', '/api', '/api/sshusers/x', '/api/sshusers/-1', '/api/sshusers/1/2', '/api/apikeys', '/api/roles/1']) {
      expect(resolveRoute(p), p).toBeNull();
    }
  });

  it('allow GET/POST on lists and GET/PUT/DELETE on items', () => {
    expect(allowedMethods({ resource: 'apikeys' })).toEqual(['GET', 'HEAD', 'POST']);
    expect(allowedMethods({ resource: 'apikeys', id: 1 })).toEqual(['GET', 'HEAD', 'PUT', 'DELETE']);
    expect(allowedMethods({ resource: 'roles' })).toEqual(['GET', 'HEAD']);
  });
});

describe('authentication', () => {
  const tokens = { readWrite: new Set(['rw']), readOnly: new Set(['ro']), expired: new Set(['old']) };

  it('grants read-write or read-only access by token', () => {
    expect(authenticate('Bearer rw', tokens)).toBe('read-write');
    expect(authenticate('bearer  ro ', tokens)).toBe('read-only');
  });

  it('answers 401 for no token, another scheme, unknown and expired tokens', () => {
    for (const header of [undefined, '', 'Basic rw', 'Bearer', 'Bearer nope', 'Bearer old']) {
      expect(authenticate(header, tokens), String(header)).toMatchObject({ status: 401 });
    }
    expect(authenticate('Bearer old', tokens)).toMatchObject({ body: { errors: [{ msg: expect.stringContaining('expired') }] } });
  });
});
