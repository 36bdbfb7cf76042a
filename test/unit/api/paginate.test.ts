import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pageBudget, paginate, type PaginateOptions, type RawPage } from '../../../src/api/paginate.js';

interface Item {
  readonly id: number;
  readonly name: string;
}

/** A service behind fetchPage, and a clock the test moves: no real time anywhere. */
function listing(pages: (cursor: number | string, size: number) => RawPage<Item>, extra: Partial<PaginateOptions<Item>> = {}) {
  const asked: { cursor: number | string; size: number }[] = [];
  const clock = { now: 0, perPage: 0 };
  const options: PaginateOptions<Item> = {
    route: '/api/things',
    idOf: (item) => item.id,
    contentOf: (item) => item.name,
    pageSize: 1000,
    maxPages: 100_000,
    deadlineMs: 300_000,
    now: () => clock.now,
    fetchPage: async (cursor, size) => {
      asked.push({ cursor, size });
      clock.now += clock.perPage;
      return pages(cursor, size);
    },
    ...extra,
  };
  return { asked, clock, run: () => collect(paginate(options)) };
}

async function collect(pages: AsyncIterable<{ items: readonly Item[] }>): Promise<Item[]> {
  const all: Item[] = [];
  for await (const page of pages) all.push(...page.items);
  return all;
}

const items = (from: number, count: number): Item[] => Array.from({ length: count }, (_, i) => ({ id: from + i, name: `n${from + i}` }));
const cursorOf = (current: number | string, next: number | string | null) => ({ current, next, previous: null });

describe('a listing ends when the pages stop making sense', () => {
  it('the page budget grows with the items seen, and is small when they do not', () => {
    expect(pageBudget(0, 0)).toBe(16);
    expect(pageBudget(100_000, 100)).toBe(2016);
    expect(pageBudget(3, 3)).toBe(18);
  });

  it('a fresh cursor on every empty page: listing_unbounded after 16 pages', async () => {
    const l = listing((cursor) => ({ cursor: cursorOf(cursor, Number(cursor) + 1), items: [] }));
    await expect(l.run()).rejects.toMatchObject({ code: 'listing_unbounded', pagesRead: 16, itemsRead: 0 });
    expect(l.asked).toHaveLength(16);
  });

  it('a fresh cursor on every page repeating the same items: listing_unbounded after 18 pages', async () => {
    const l = listing((cursor) => ({ cursor: cursorOf(cursor, Number(cursor) + 1), items: items(1, 3) }));
    await expect(l.run()).rejects.toMatchObject({ code: 'listing_unbounded', itemsRead: 3 });
    expect(l.asked).toHaveLength(18);
  });

  it('a real listing, 10,000 items in pages of 100 with a page repeated, completes', async () => {
    const l = listing((cursor, size) => {
      const at = Number(cursor);
      const page = at === 30 ? items(2901, size) : items(at * size + 1, size);
      return { cursor: cursorOf(cursor, at === 99 ? null : at + 1), items: page };
    }, { pageSize: 100 });
    expect(await l.run()).toHaveLength(9_900);
  });

  it('past the listing deadline (by the injected clock): listing_deadline, no further page', async () => {
    const l = listing((cursor, size) => ({ cursor: cursorOf(cursor, Number(cursor) + 1), items: items(Number(cursor) * size + 1, size) }), { pageSize: 10, deadlineMs: 300_000 });
    l.clock.perPage = 60_000;
    await expect(l.run()).rejects.toMatchObject({ code: 'listing_deadline', pagesRead: 6, message: expect.stringContaining('longer than the listing deadline (listDeadlineMs, 300 s)') });
    expect(l.asked).toHaveLength(6);
  });
});

describe('one id listed with two contents is an inconsistent listing; the same content twice counts once', () => {
  it('an id renamed between pages: listing_inconsistent', async () => {
    const l = listing((cursor) =>
      cursor === 0
        ? { cursor: cursorOf(0, 1), items: [{ id: 10, name: 'aaron' }, { id: 50, name: 'old-contractor' }] }
        : { cursor: cursorOf(1, null), items: [{ id: 50, name: 'alice' }] },
    );
    await expect(l.run()).rejects.toMatchObject({ code: 'listing_inconsistent', message: expect.stringContaining('id 50 was listed twice with different contents') });
  });

  it('an identical duplicate is dropped silently', async () => {
    const l = listing((cursor) => (cursor === 0 ? { cursor: cursorOf(0, 1), items: items(1, 2) } : { cursor: cursorOf(1, null), items: items(2, 2) }));
    expect((await l.run()).map((i) => i.id)).toEqual([1, 2, 3]);
  });
});

describe('a listing gives each id once, whatever order the pages have (the one place dedupe happens)', () => {
  it('an item listed twice counts once, the first time it is seen, in order or not', () => {
    const ids = fc.array(fc.nat({ max: 20 }), { maxLength: 40 });
    const pageSize = fc.integer({ min: 1, max: 7 });
    return fc.assert(
      fc.asyncProperty(ids, pageSize, async (listed, size) => {
        const all = listed.map((id) => ({ id, name: `n${id}` }));
        const l = listing((cursor) => {
          const from = Number(cursor);
          return { cursor: cursorOf(from, from + size < all.length ? from + size : null), items: all.slice(from, from + size) };
        });
        const firsts = new Map<number, Item>();
        for (const item of all) if (!firsts.has(item.id)) firsts.set(item.id, item);
        expect(await l.run()).toEqual([...firsts.values()]);
      }),
      { numRuns: 300 },
    );
  });
});

describe("the fewest round trips: a large page first, then the service's own largest", () => {
  function cappedService(total: number, serverMax: number) {
    return (cursor: number | string, size: number): RawPage<Item> => {
      const from = Number(cursor);
      const n = Math.min(size, serverMax, total - from);
      return { cursor: cursorOf(from, from + n < total ? from + n : null), items: items(from + 1, n) };
    };
  }

  it('asks for the ceiling, learns 250 from the first short page, asks for 250 after: ceil(N / 250) pages', async () => {
    let learned: number | undefined;
    const l = listing(cappedService(1000, 250), { onServerMax: (size) => (learned = size) });
    expect(await l.run()).toHaveLength(1000);
    expect(l.asked.map((a) => a.size)).toEqual([1000, 250, 250, 250]);
    expect(learned).toBe(250);
  });

  it('a short last page teaches nothing (the service may allow far more)', async () => {
    let learned: number | undefined;
    const l = listing(cappedService(40, 250), { onServerMax: (size) => (learned = size) });
    expect(await l.run()).toHaveLength(40);
    expect(l.asked).toHaveLength(1);
    expect(learned).toBeUndefined();
  });

  it('an empty page with a next teaches nothing either', async () => {
    let learned: number | undefined;
    const l = listing((cursor) => (cursor === 0 ? { cursor: cursorOf(0, 1), items: [] } : { cursor: cursorOf(1, null), items: items(1, 5) }), { onServerMax: (size) => (learned = size) });
    expect(await l.run()).toHaveLength(5);
    expect(l.asked.map((a) => a.size)).toEqual([1000, 1000]);
    expect(learned).toBeUndefined();
  });

  it('--page-size stays a ceiling: a service allowing more is asked for no more', async () => {
    const l = listing(cappedService(300, 5000), { pageSize: 100 });
    expect(await l.run()).toHaveLength(300);
    expect(l.asked.map((a) => a.size)).toEqual([100, 100, 100]);
  });
});
