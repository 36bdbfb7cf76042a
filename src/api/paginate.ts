import { ApiError } from './api-error.js';
import { ListingIncompleteError, pageFailed, type ListingIncompleteCode } from './listing-incomplete-error.js';
import type { Page, PageCursor } from './types.js';

export interface RawPage<T> {
  readonly cursor: PageCursor;
  readonly items: readonly T[];
}

export interface PaginateOptions<T> {
  /** List endpoint route, e.g. `/api/sshusers` (for messages). */
  readonly route: string;
  /** Fetches the page at `cursor` with `size` items at most (retries included); throws ApiError. */
  readonly fetchPage: (cursor: number | string, size: number) => Promise<RawPage<T>>;
  readonly idOf: (item: T) => number;
  /**
   * What must be the same each time one id is listed (its name and fields): an id listed twice
   * with two contents means the listing shifted while it was read. A string, or a hash of the
   * fields already (hashFields: no string built per item).
   */
  readonly contentOf: (item: T) => string | number;
  /** Items asked for per page. */
  readonly pageSize: number;
  /**
   * Called once when a page shows the service's largest page (shorter than asked, with a next
   * page): later pages, and later listings, ask for exactly that.
   */
  readonly onServerMax?: (size: number) => void;
  /** A bound on the loop, whatever else happens. */
  readonly maxPages: number;
  /** The whole listing must end within this long, by `now`. */
  readonly deadlineMs: number;
  /** Monotonic milliseconds (the client's clock; tests drive it). */
  readonly now: () => number;
}

/**
 * Pages beyond what the items seen so far explain: a listing of N items in pages of up to L
 * needs about N / L pages. Twice that, and a few more, allows for pages that come back short
 * (filtered, shifting) without letting a service hand out new cursors forever: a service that
 * offers an endless chain of empty or repeating pages is stopped after a few dozen, not after
 * 100,000 (80 minutes).
 */
export function pageBudget(freshItems: number, largestPage: number): number {
  return 2 * Math.ceil(freshItems / Math.max(1, largestPage)) + 16;
}

function showCursor(value: number | string): string {
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

// Keyed by what goes on the wire: 0 and "0" are the same request.
function cursorKey(value: number | string): string {
  return String(value);
}

/** Where a content hash starts (FNV-1a's offset basis). */
export const hashStart = 0x811c9dc5;
const fnvPrime = 0x01000193;

/**
 * FNV-1a over `text`'s UTF-16 code units, continuing `hash`, then one 0 unit to end the field:
 * 4 bytes per id seen instead of its content, and no string built to hash.
 */
export function hashText(hash: number, text: string): number {
  let h = hash;
  for (let i = 0; i < text.length; i += 1) h = Math.imul(h ^ text.charCodeAt(i), fnvPrime);
  return Math.imul(h, fnvPrime);
}

/** The same for a number (its low 32 bits, then its high ones) or a boolean. */
export function hashValue(hash: number, value: number | boolean): number {
  if (typeof value === 'boolean') return Math.imul(hash ^ (value ? 1 : 2), fnvPrime);
  const h = Math.imul(hash ^ (value | 0), fnvPrime);
  return Math.imul(h ^ Math.floor(value / 0x1_0000_0000), fnvPrime);
}

const contentHash = (content: string | number): number => (typeof content === 'number' ? content : hashText(hashStart, content)) >>> 0;

/**
 * Every page of a listing, following `next` until it is null and sending back exactly the
 * value received (cursors are opaque). An item listed twice (by id) with the same content
 * counts once. The listing ends with ListingIncompleteError when it cannot be trusted to be
 * whole: a cursor offered twice, a page that fails after its retries or does not parse, more
 * pages than its items explain (pageBudget), the listing deadline, or one id listed with two
 * contents (`listing_inconsistent`: the caller may read it again). A consumer that reaches the
 * end of the iteration has seen everything, once.
 */
export async function* paginate<T>(options: PaginateOptions<T>): AsyncGenerator<Page<T>, void, undefined> {
  const { route } = options;
  const started = options.now();
  const sent = new Set<string>();
  const seen = new Map<number, number>();
  let cursor: number | string = 0;
  let size = options.pageSize;
  let learning = options.onServerMax !== undefined;
  let itemsRead = 0;
  let largestPage = 0;
  const incomplete = (code: ListingIncompleteCode, pagesRead: number, message: string, cause?: unknown): ListingIncompleteError =>
    new ListingIncompleteError(code, `GET ${route}: ${message}`, { route, pagesRead, itemsRead, ...(cause === undefined ? {} : { cause }) });

  for (let index = 0; ; index += 1) {
    if (index >= options.maxPages) throw incomplete('listing_incomplete', index, `listing abandoned after ${index} pages (the bound is ${options.maxPages})`);
    const elapsed = options.now() - started;
    if (index > 0 && elapsed > options.deadlineMs) {
      throw incomplete('listing_deadline', index, `listing abandoned after ${index} pages and ${Math.round(elapsed / 1000)} s: longer than the listing deadline (listDeadlineMs, ${Math.round(options.deadlineMs / 1000)} s)`);
    }
    sent.add(cursorKey(cursor));
    let raw: RawPage<T>;
    try {
      raw = await options.fetchPage(cursor, size);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      throw pageFailed(route, index, itemsRead, error);
    }
    // The page's own array unless an item on it was seen before (nearly always: no copy).
    let fresh: T[] | undefined;
    const listed = raw.items;
    for (let i = 0; i < listed.length; i += 1) {
      const item = listed[i] as T;
      const id = options.idOf(item);
      const content = contentHash(options.contentOf(item));
      const before = seen.get(id);
      if (before === undefined) {
        seen.set(id, content);
        fresh?.push(item);
      } else if (before !== content) {
        throw incomplete('listing_inconsistent', index + 1, `id ${id} was listed twice with different contents: the listing shifted while it was read (an item renamed or changed between pages)`);
      } else {
        fresh ??= listed.slice(0, i);
      }
    }
    const items = fresh ?? listed;
    itemsRead += items.length;
    largestPage = Math.max(largestPage, listed.length);
    yield { items, cursor: raw.cursor, index, duplicates: listed.length - items.length };
    const { next } = raw.cursor;
    if (next === null) return;
    if (sent.has(cursorKey(next))) {
      throw incomplete('cursor_loop', index + 1, `the service offered cursor ${showCursor(next)} a second time; listing abandoned after ${index + 1} pages`);
    }
    if (index + 1 >= pageBudget(itemsRead, largestPage)) {
      throw incomplete('listing_unbounded', index + 1, `the service kept offering new pages: ${index + 1} pages for ${itemsRead} items in pages of up to ${largestPage}; listing abandoned`);
    }
    // A short page that is not the last shows the service's own limit: ask for exactly that.
    if (learning && raw.items.length > 0 && raw.items.length < size) {
      size = raw.items.length;
      learning = false;
      options.onServerMax?.(size);
    }
    cursor = next;
  }
}
