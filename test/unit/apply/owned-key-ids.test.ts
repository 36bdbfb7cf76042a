import { describe, expect, it } from 'vitest';
import { ownedKeyIds } from '../../../src/apply/execute-plan.js';
import type { ActualApikey } from '../../../src/model/index.js';
import { actual, desired, key } from '../../helpers/plan-fixtures.js';

const remote = (id: number, name: string): ActualApikey => ({ id, name, superuser: false, roles: [] });

describe("which remote key's token goes to each declared key's file", () => {
  it('a declared name carried by one remote key owns that key', () => {
    const owned = ownedKeyIds(desired({ apikeys: [key('billing'), key('monitor')] }), actual([], [remote(1, 'billing'), remote(2, 'monitor'), remote(3, 'other')]));
    expect([...owned]).toEqual([
      ['billing', 1],
      ['monitor', 2],
    ]);
  });

  it('a pinned id owns its file, and a key claimed by a pin is nobody else’s', () => {
    const d = desired({ apikeys: [key('billing', { id: 5 }), key('shared')] });
    const owned = ownedKeyIds(d, actual([], [remote(5, 'shared'), remote(6, 'shared')]));
    expect([...owned]).toEqual([
      ['billing', 5],
      ['shared', 6],
    ]);
  });

  it('no owner when several remote keys carry the name, or the name is declared twice, or the key is absent', () => {
    const d = desired({ apikeys: [key('twice'), key('twice', { id: 9 }), key('ambiguous'), key('gone', { ensure: 'absent' })] });
    const owned = ownedKeyIds(d, actual([], [remote(8, 'twice'), remote(9, 'twice'), remote(10, 'ambiguous'), remote(11, 'ambiguous'), remote(12, 'gone')]));
    expect([...owned]).toEqual([]);
  });

  it('reads each list a bounded number of times, not once per declared key (it runs on every sync)', () => {
    const n = 2000;
    let reads = 0;
    const keys = Array.from({ length: n }, (_, i) => remote(i + 1, `key-${i + 1}`));
    // Counts every element read of the remote list: a scan per declared key reads n² of them.
    const counted = new Proxy(keys, {
      get(target, property, receiver) {
        if (typeof property === 'string' && /^\d+$/.test(property)) reads += 1;
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
    const owned = ownedKeyIds(desired({ apikeys: keys.map((k) => key(k.name)) }), actual([], counted));
    expect([...owned]).toHaveLength(n);
    expect(reads).toBeLessThanOrEqual(2 * n);
  });
});
