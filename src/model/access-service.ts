import type { ActualApikey, ActualSshUser, NamedRole } from './actual-state.js';
import type { ApikeyKind, BodyOf, NewOf, SshUserKind } from './kinds/index.js';
import type { SecretValue } from './secret-value.js';

/**
 * The one boundary between amsync and the service it reconciles (a port, as kysely's Driver):
 * the HTTP client implements it (src/api/), and tests use the emulator's Store behind it. It
 * speaks the model's item types: whoever implements it normalises each item once (unknown
 * fields dropped, roles as sorted unique ids) and lists each id once. Everything above it —
 * reading the state, applying a plan, drift handling — sees nothing else of the service.
 *
 * Errors carry stable codes (AmsyncError.code): `conflict` (409), `not_found` (404 on an update
 * or a delete), `unknown_outcome` (a POST whose answer was lost), `listing_inconsistent` (a
 * listing that shifted while it was read), and others that simply fail the call.
 */
export interface AccessService {
  /** Every SSH user: complete, or a throw (never a partial listing). */
  listSshUsers(): Promise<readonly ActualSshUser[]>;
  /**
   * Every apikey, complete or a throw. `tokens: false`: the caller has no use for the tokens,
   * which are then left out as the pages arrive (at 100k keys, ~17 MB of strings).
   */
  listApikeys(options?: ListApikeysOptions): Promise<readonly ListedApikey[]>;
  /** Every role; null when the service has no roles listing. */
  listRoles(): Promise<readonly NamedRole[] | null>;
  /** The token's scopes (`GET /api/user/info`); null where the service does not answer it. */
  userInfo(): Promise<TokenInfo | null>;
  /** One item as it is now; undefined when the service answers 404 (verified deletes). */
  fetchSshUser(id: number): Promise<ActualSshUser | undefined>;
  fetchApikey(id: number): Promise<ListedApikey | undefined>;
  createSshUser(body: NewSshUser): Promise<WriteOutcome>;
  updateSshUser(id: number, changes: SshUserChanges): Promise<WriteOutcome>;
  deleteSshUser(id: number): Promise<void>;
  createApikey(body: NewApikey): Promise<WriteOutcome>;
  updateApikey(id: number, changes: ApikeyChanges): Promise<WriteOutcome>;
  deleteApikey(id: number): Promise<void>;
}

export interface ListApikeysOptions {
  /** @default true */
  readonly tokens?: boolean;
}

/** An apikey as listed or fetched: the state's fields, and its token when the service sent one. */
export interface ListedApikey extends ActualApikey {
  /** Never part of the state or a plan: it goes to the token sink only. */
  readonly token?: SecretValue;
}

/** What one part of the API allows a token. */
export interface TokenScope {
  readonly name: string;
  readonly read: boolean;
  readonly write: boolean;
}

export interface TokenInfo {
  readonly scopes: readonly TokenScope[];
}

/** The outcome of one write: the item's id when the service answered 200, or accepted (202). */
export interface WriteOutcome {
  readonly id?: number;
  /** 202: the service applies the write in the background; the next listing confirms it. */
  readonly accepted: boolean;
  /** A created apikey's token. */
  readonly token?: SecretValue;
}

/**
 * Request bodies, typed by the kinds' declarations (model/kinds): a create sends the fields
 * without a default (the password is revealed only where the body is serialised) and may leave
 * the others to the service; an update sends the fields that change.
 */
export type NewSshUser = NewOf<SshUserKind>;
export type SshUserChanges = BodyOf<SshUserKind>;
export type NewApikey = NewOf<ApikeyKind>;
export type ApikeyChanges = BodyOf<ApikeyKind>;
