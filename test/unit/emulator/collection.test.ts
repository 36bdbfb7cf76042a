import { describe, expect, it } from 'vitest';
import { Collection, lowerBound, type Page } from '../../../src/emulator/collection.js';

function filled(n: number) {
  const c = new Collection<{ id: number }>(99);
  for (let i = 0; i < n; i += 1) c.insert({ id: c.allocateId() });
  return c;
}

describe('collection paging', () => {
  it('overlapping pages (duplicatePage fault) still end, and cover every item', () => {
    for (const n of [0, 1, 2, 7, 50]) {
      const c = filled(n);
      const seen = new Set<number>();
      let total = 0;
      let cursor: number | null = 0;
      for (let guard = 0; cursor !== null; guard += 1) {
        expect(guard).toBeLessThan(1000);
        const page: Page<{ id: number }> = c.page(cursor, 6, 3)!;
        page.items.forEach((i) => seen.add(i.id));
        total += page.items.length;
        cursor = page.next;
      }
      expect(seen.size).toBe(n);
      if (n > 6) expect(total).toBeGreaterThan(n);
    }
  });

  it('keeps ids sorted when loaded out of order', () => {
    const c = new Collection<{ id: number }>(1);
    for (const id of [5, 2, 9, 1]) c.insert({ id });
    expect(c.values().map((i) => i.id)).toEqual([1, 2, 5, 9]);
    expect(c.upcomingId).toBe(10);
    expect(() => c.insert({ id: 2 })).toThrow(RangeError);
  });

  it('lowerBound finds the first element not below the value', () => {
    expect(lowerBound([1, 3, 5], 0)).toBe(0);
    expect(lowerBound([1, 3, 5], 3)).toBe(1);
    expect(lowerBound([1, 3, 5], 4)).toBe(2);
    expect(lowerBound([1, 3, 5], 6)).toBe(3);
  });
});
