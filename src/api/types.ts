import type { ActualSshUser, ListedApikey } from '../model/index.js';

/** The page cursor object; values are opaque and sent back exactly as received. */
export interface PageCursor {
  readonly current: number | string | null;
  readonly next: number | string | null;
  readonly previous: number | string | null;
}

/** One page of a listing. */
export interface Page<T> {
  /** Items not already seen on an earlier page of this listing (by id). */
  readonly items: readonly T[];
  readonly cursor: PageCursor;
  /** 0 for the first page. */
  readonly index: number;
  /** Items on this page that an earlier page already had (counted once). */
  readonly duplicates: number;
}

export type SshUserPage = Page<ActualSshUser>;
export type ApikeyPage = Page<ListedApikey>;
