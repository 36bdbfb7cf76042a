import { ApiError } from './api-error.js';
import { ListingIncompleteError, pageFailed } from './listing-incomplete-error.js';
import type { Page, PageCursor } from './types.js';

export interface RawPage<T> {
  readonly cursor: PageCursor;
  readonly items: readonly T[];
}

export interface PaginateOptions<T> {
  /** List endpoint route, e.g. `/api/sshusers` (for messages). */
  readonly route: string;
  /** Fetches the page at `cursor` (retries included); throws ApiError. */
  readonly fetchPage: (cursor: number | string) => Promise<RawPage<T>>;
  readonly idOf: (item: T) => number;
  /** A bound on the loop, against a service that hands out new cursors forever. */
  readonly maxPages: number;
}

function showCursor(value: number | string): string {
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

// Keyed by what goes on the wire: 0 and "0" are the same request.
function cursorKey(value: number | string): string {
  return String(value);
}

/**
 * Every page of a listing, following `next` until it is null and sending back exactly the
 * value received (cursors are opaque). A cursor offered twice, a page that fails after its
 * retries or does not parse, or too many pages end the listing with ListingIncompleteError:
 * a consumer that reaches the end of the iteration has seen everything.
 */
export async function* paginate<T>(options: PaginateOptions<T>): AsyncGenerator<Page<T>, void, undefined> {
  const { route } = options;
  const sent = new Set<string>();
  const seenIds = new Set<number>();
  let cursor: number | string = 0;
  let itemsRead = 0;
  for (let index = 0; ; index += 1) {
    if (index >= options.maxPages) {
      throw new ListingIncompleteError('listing_incomplete', `GET ${route}: listing abandoned after ${index} pages (the bound is ${options.maxPages})`, {
        route,
        pagesRead: index,
        itemsRead,
      });
    }
    sent.add(cursorKey(cursor));
    let raw: RawPage<T>;
    try {
      raw = await options.fetchPage(cursor);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      throw pageFailed(route, index, itemsRead, error);
    }
    const fresh: T[] = [];
    for (const item of raw.items) {
      const id = options.idOf(item);
      if (seenIds.has(id)) continue;
      seenIds.add(id);
      fresh.push(item);
    }
    itemsRead += fresh.length;
    yield { items: fresh, cursor: raw.cursor, index, duplicates: raw.items.length - fresh.length };
    const { next } = raw.cursor;
    if (next === null) return;
    if (sent.has(cursorKey(next))) {
      throw new ListingIncompleteError('cursor_loop', `GET ${route}: the service offered cursor ${showCursor(next)} a second time; listing abandoned after ${index + 1} pages`, {
        route,
        pagesRead: index + 1,
        itemsRead,
      });
    }
    cursor = next;
  }
}
