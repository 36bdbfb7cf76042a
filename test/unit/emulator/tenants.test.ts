import { describe, expect, it } from 'vitest';
import { checkTenants } from '../../../src/emulator/options.js';
import { describeTenantNames, numberedTenants, splitTenantTarget, tenantPrefix, tenantSeed } from '../../../src/emulator/tenants.js';

describe('tenant names', () => {
  it('--tenants N names them t1 … tN', () => {
    expect(numberedTenants(3)).toEqual(['t1', 't2', 't3']);
    expect(checkTenants(2)).toEqual(['t1', 't2']);
    expect(checkTenants(['blue', 'green-2', '0'])).toEqual(['blue', 'green-2', '0']);
  });

  it.each([
    [0, /`tenants` to be an integer from 1 to 10000/],
    [10_001, /`tenants` to be an integer from 1 to 10000/],
    [2.5, /`tenants` to be an integer/],
    ['3', /`tenants` to be an integer/],
    [[], /`tenants` to be a list of 1 to 10000 names, got '0 names'/],
    [['ok', 'Not-ok'], /`tenants\[1\]` to be a name matching/],
    [['a_b'], /`tenants\[0\]` to be a name matching/],
    [['-a'], /`tenants\[0\]`/],
    [['a'.repeat(64)], /`tenants\[0\]`/],
    [['a', 'b', 'a'], /`tenants\[2\]` to be a name not given before, got 'a'/],
  ])('%j is refused loudly', (tenants, message) => {
    expect(() => checkTenants(tenants)).toThrow(message);
  });

  it('a name of 63 characters is the longest', () => {
    expect(checkTenants(['a'.repeat(63)])).toHaveLength(1);
  });

  it('are described briefly for the startup line', () => {
    expect(describeTenantNames(numberedTenants(500))).toBe('t1 … t500');
    expect(describeTenantNames(['t1'])).toBe('t1');
    expect(describeTenantNames(['a', 'b'])).toBe('a, b');
    expect(describeTenantNames(['a', 'b', 'c', 'd', 'e'])).toBe('a, b, … e');
  });
});

describe('a request target splits into tenant and the service\'s own target', () => {
  it.each([
    ['/t/a/api/sshusers?cursor=0', { name: 'a', target: '/api/sshusers?cursor=0' }],
    ['/t/t12/_emulator/state', { name: 't12', target: '/_emulator/state' }],
    ['/t/a/', { name: 'a', target: '/' }],
    ['/t/a', { name: 'a', target: '/' }],
    ['/t/a?x=1', { name: 'a', target: '/?x=1' }],
    ['/t/', { name: '', target: '/' }],
    ['/t/UNKNOWN/api', { name: 'UNKNOWN', target: '/api' }],
  ])('%s', (target, expected) => {
    expect(splitTenantTarget(target)).toEqual(expected);
  });

  it.each(['/api/sshusers', '/_emulator/state', '/t', '/tx/a/api', '/'])('%s is outside /t/', (target) => {
    expect(splitTenantTarget(target)).toBeNull();
  });

  it('a tenant\'s prefix has no trailing slash', () => {
    expect(tenantPrefix('t3')).toBe('/t/t3');
  });
});

describe('each tenant\'s fault seed', () => {
  it('is replayable from the emulator\'s seed and differs between tenants', () => {
    const seeds = numberedTenants(1000).map((n) => tenantSeed(42, n));
    expect(new Set(seeds).size).toBe(1000);
    expect(tenantSeed(42, 't1')).toBe(seeds[0]);
    expect(tenantSeed(43, 't1')).not.toBe(seeds[0]);
    for (const s of seeds) expect(Number.isSafeInteger(s) && s >= 0 && s < 2 ** 31).toBe(true);
  });
});
