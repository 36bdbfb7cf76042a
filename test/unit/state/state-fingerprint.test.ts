import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ActualState } from '../../../src/model/index.js';
import { stateFingerprint } from '../../../src/state/index.js';

/** The fingerprint as first defined: saved plans made before must still match. */
function reference(state: ActualState): string {
  const users = [...state.sshUsers].sort((a, b) => a.id - b.id).map((u) => [u.id, u.username, u.level]);
  const keys = [...state.apikeys].sort((a, b) => a.id - b.id).map((k) => [k.id, k.name, k.superuser, [...k.roles].sort((x, y) => x - y)]);
  return createHash('sha256').update(JSON.stringify({ users, keys })).digest('hex');
}

const text = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('ünï', '"q"', '\\', '\u2028', 'a'.repeat(70_000)));
const state = fc.record({
  sshUsers: fc.array(fc.record({ id: fc.nat(), username: text, level: fc.constantFrom('n1', 'n2') }), { maxLength: 8 }),
  apikeys: fc.array(fc.record({ id: fc.nat(), name: text, superuser: fc.boolean(), roles: fc.array(fc.nat({ max: 9 }), { maxLength: 4 }) }), { maxLength: 8 }),
});

describe('the state fingerprint', () => {
  it('hashes the same bytes as the sorted listing written as one JSON document', () => {
    fc.assert(
      fc.property(state, (s) => {
        expect(stateFingerprint(s)).toBe(reference(s));
      }),
      { numRuns: 300 },
    );
  });

  it('does not depend on the listing order', () => {
    fc.assert(
      fc.property(state, (s) => {
        const reversed = { sshUsers: [...s.sshUsers].reverse(), apikeys: [...s.apikeys].reverse() };
        const unique = (xs: readonly { id: number }[]) => new Set(xs.map((x) => x.id)).size === xs.length;
        if (unique(s.sshUsers) && unique(s.apikeys)) expect(stateFingerprint(reversed)).toBe(stateFingerprint(s));
      }),
      { numRuns: 100 },
    );
  });

  it('is the same over a listing of many thousand items as the one-document form', () => {
    const big: ActualState = {
      sshUsers: Array.from({ length: 5000 }, (_, i) => ({ id: 5000 - i, username: `user-${i}`, level: 'n1' })),
      apikeys: Array.from({ length: 5000 }, (_, i) => ({ id: i + 1, name: `key-${i}`, superuser: i % 7 === 0, roles: [3, 1] })),
    };
    expect(stateFingerprint(big)).toBe(reference(big));
  });
});
