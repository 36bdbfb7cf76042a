import { AmsyncError } from '../errors.js';
import type { ApiError } from './api-error.js';

/**
 * `listing_incomplete`: a page failed or the page bound was reached; `cursor_loop`: a cursor
 * came back; `listing_unbounded`: more pages than the items explain; `listing_deadline`: the
 * listing took longer than its deadline; `listing_inconsistent`: one id with two contents.
 */
export type ListingIncompleteCode = 'listing_incomplete' | 'cursor_loop' | 'listing_unbounded' | 'listing_deadline' | 'listing_inconsistent';

export interface ListingIncompleteDetails {
  /** Route of the list endpoint, e.g. `/api/sshusers`. */
  readonly route: string;
  readonly pagesRead: number;
  readonly itemsRead: number;
  /** The ApiError that ended the listing, when one did. */
  readonly cause?: unknown;
}

/**
 * A listing could not be read to its end. It is thrown instead of returning what was read,
 * so a partial listing can never be taken for the whole (and never plans a delete).
 */
export class ListingIncompleteError extends AmsyncError {
  declare readonly code: ListingIncompleteCode;
  readonly route: string;
  readonly pagesRead: number;
  readonly itemsRead: number;

  constructor(code: ListingIncompleteCode, message: string, details: ListingIncompleteDetails) {
    super(code, message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'ListingIncompleteError';
    this.route = details.route;
    this.pagesRead = details.pagesRead;
    this.itemsRead = details.itemsRead;
  }
}

/**
 * The error for a page that failed: `GET /api/sshusers: listing incomplete after 2 pages: 503
 * service unavailable (gave up after 8 attempts)`. Each part is said once: the route is not
 * repeated from the cause, and a failure of the whole service (nothing listens at the URL, an
 * untrusted certificate) is its own message, as no page was the problem. A call the page
 * needed first that failed (the token exchange) is named as itself: `GET /api/sshusers: not
 * sent: POST /api/v1/oauth2/token: 500 internal server error`.
 */
export function pageFailed(route: string, pagesRead: number, itemsRead: number, cause: ApiError): ListingIncompleteError {
  const details = { route, pagesRead, itemsRead, cause };
  if (cause.serviceWide) return new ListingIncompleteError('listing_incomplete', cause.message, details);
  const progress = pagesRead === 0 ? '' : `listing incomplete after ${pagesRead} page${pagesRead === 1 ? '' : 's'}: `;
  if (cause.route !== route) return new ListingIncompleteError('listing_incomplete', `GET ${route}: ${progress}not sent: ${cause.message}`, details);
  return new ListingIncompleteError('listing_incomplete', `${cause.method} ${route}: ${progress}${cause.detail}`, details);
}
