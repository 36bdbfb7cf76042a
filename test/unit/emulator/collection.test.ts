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

  it('never hands out a falsy next: a next is null (the end) or a cursor above 0', () => {
    // The vendor's client follows `next` while it is truthy: 0 would end its listing early.
    for (const n of [0, 1, 2, 5, 6, 7, 13, 50]) {
      for (const [size, advance] of [[1, 1], [3, 3], [6, 3], [7, 7], [100, 100]] as const) {
        const c = filled(n);
        let cursor: number | null = 0;
        for (let guard = 0; cursor !== null; guard += 1) {
          expect(guard).toBeLessThan(1000);
          const page: Page<{ id: number }> = c.page(cursor, size, advance)!;
          if (page.next !== null) expect(page.next).toBeGreaterThan(0);
          const loop = c.loopCursor(page.position, size);
          if (n > 0) expect(loop).toBeGreaterThan(0);
          else expect(loop).toBeNull();
          cursor = page.next;
        }
      }
    }
  });

  it('the loop cursor names an earlier page: the previous one, or the first', () => {
    const c = filled(30);
    const first = c.page(0, 10)!;
    const second = c.page(first.next!, 10)!;
    expect(c.page(c.loopCursor(second.position, 10)!, 10)!.items).toEqual(first.items);
    expect(c.page(c.loopCursor(first.position, 10)!, 10)!.items).toEqual(first.items);
  });
});
