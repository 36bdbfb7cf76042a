import { describe, expect, it } from 'vitest';
import { ordinalOf, ownedTargets, parseShard, resolveShard, shardLease, shardOf } from '../../../src/fleet/index.js';
import { UsageError } from '../../../src/errors.js';

/** Rendezvous (highest-random-weight) hashing of target names onto shards (DESIGN.md §9). */

const names = Array.from({ length: 500 }, (_, i) => `target-${String(i).padStart(3, '0')}`);

describe('rendezvous hashing assigns each target to one shard', () => {
  it('is stable: the same name, the same shard, every time and in any order', () => {
    const first = names.map((n) => shardOf(n, 5));
    expect([...names].reverse().map((n) => shardOf(n, 5)).reverse()).toEqual(first);
    expect(shardOf('sp-1', 5)).toBe(shardOf('sp-1', 5));
    expect(names.every((n) => shardOf(n, 1) === 0)).toBe(true);
  });

  it('is balanced within reason: 500 names over 5 shards, each 100 ± 30', () => {
    const counts = [0, 0, 0, 0, 0];
    for (const n of names) counts[shardOf(n, 5)]! += 1;
    for (const c of counts) expect(c).toBeGreaterThanOrEqual(70);
    for (const c of counts) expect(c).toBeLessThanOrEqual(130);
  });

  it.each([1, 2, 4, 5, 9])('from %i to N+1 shards moves only the targets the new shard wins, about 1/(N+1)', (n) => {
    const moved = names.filter((name) => shardOf(name, n) !== shardOf(name, n + 1));
    // Every target that moves goes to the new shard: none moves between the old ones.
    expect(moved.every((name) => shardOf(name, n + 1) === n)).toBe(true);
    const expected = names.length / (n + 1);
    expect(moved.length).toBeGreaterThan(expected * 0.6);
    expect(moved.length).toBeLessThan(expected * 1.4);
  });

  it('the shards together own every target exactly once', () => {
    const owned = [0, 1, 2].flatMap((index) => ownedTargets(names.map((name) => ({ name })), { index, count: 3 }).map((t) => t.name));
    expect(owned.sort()).toEqual([...names].sort());
  });
});

describe('which shard a replica is', () => {
  it('--shard I/N', () => {
    expect(parseShard('2/5')).toEqual({ index: 2, count: 5 });
    for (const bad of ['5/5', '1', '-1/3', 'a/b', '0/0']) expect(parseShard(bad)).toBeUndefined();
    expect(resolveShard({ shard: '1/3' }, {})).toEqual({ index: 1, count: 3 });
    expect(() => resolveShard({ shard: '3/3' }, {})).toThrow(UsageError);
  });

  it('--shards N: the ordinal of a StatefulSet pod name (POD_NAME, else HOSTNAME)', () => {
    expect(ordinalOf('amsync-fleet-2')).toBe(2);
    expect(ordinalOf('amsync')).toBeUndefined();
    expect(resolveShard({ shards: 3 }, { HOSTNAME: 'amsync-fleet-2' })).toEqual({ index: 2, count: 3 });
    expect(resolveShard({ shards: 3 }, { POD_NAME: 'amsync-fleet-0', HOSTNAME: 'amsync-fleet-2' })).toEqual({ index: 0, count: 3 });
    expect(() => resolveShard({ shards: 3 }, { HOSTNAME: 'laptop' })).toThrow(/must end in -<ordinal>/);
    expect(() => resolveShard({ shards: 3 }, { HOSTNAME: 'amsync-fleet-3' })).toThrow(/scale the StatefulSet and --shards together/);
    expect(() => resolveShard({ shards: 3, shard: '0/3' }, {})).toThrow(UsageError);
    expect(resolveShard({}, { HOSTNAME: 'amsync-fleet-2' })).toBeUndefined();
  });

  it('each shard has its own Lease: <base>-shard-<I>', () => {
    expect(shardLease({ namespace: 'amsync', name: 'amsync-fleet' }, { index: 2, count: 3 })).toEqual({ namespace: 'amsync', name: 'amsync-fleet-shard-2' });
    expect(shardLease({ namespace: 'amsync', name: 'amsync-fleet' }, undefined)).toEqual({ namespace: 'amsync', name: 'amsync-fleet' });
  });
});
