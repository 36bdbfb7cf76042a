import type { Secret } from '../secrets/index.js';
import type { SecretValue } from '../model/index.js';

/** An SSH user as the service returns it, normalised (unknown fields dropped). */
export interface ApiSshUser {
  readonly id: number;
  readonly username: string;
  readonly level: string;
  /** ISO-8601, when the service sends it. */
  readonly createdAt?: string;
  readonly updatedAt?: string;
}

/** An apikey as the service returns it, normalised. */
export interface ApiApikey {
  readonly id: number;
  readonly name: string;
  readonly superuser: boolean;
  /** Role ids, sorted and unique (responses carry Role objects; requests take ids). */
  readonly roles: readonly number[];
  /** The key's token; a Secret so it never prints. Absent if the service left it out. */
  readonly token: Secret | undefined;
  readonly createdAt?: string;
  readonly updatedAt?: string;
}

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

export type SshUserPage = Page<ApiSshUser>;
export type ApikeyPage = Page<ApiApikey>;

export interface NewSshUser {
  readonly username: string;
  readonly level: string;
  /** Revealed only when the request body is serialised. */
  readonly password: SecretValue;
}

export interface SshUserChanges {
  readonly username?: string;
  readonly level?: string;
  readonly password?: SecretValue;
}

export interface NewApikey {
  readonly name: string;
  /** @default false (left to the service when omitted) */
  readonly superuser?: boolean;
  /** Role ids. */
  readonly roles?: readonly number[];
}

export interface ApikeyChanges {
  readonly name?: string;
  readonly superuser?: boolean;
  readonly roles?: readonly number[];
}
