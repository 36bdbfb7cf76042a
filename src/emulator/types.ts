/**
 * The shapes the emulator shows to the outside: API views, control-API documents and the
 * in-process handle. The store and the HTTP layer both speak these.
 */

/** `type` of one entry of an error body (as the real service does). */
export type ErrorType = 'invalid' | 'duplicated' | 'required' | 'not_found' | 'rule';

/** One entry of `{"errors": [...]}`. */
export interface FieldError {
  field: string;
  type: ErrorType;
  msg: string;
}

/** A role as an apikey shows it: `{id, name}` (the Role object of the service's API specification). */
export interface RoleView {
  id: number;
  name: string;
}

/** What a role permits on one part of the API (as the real service does: `scopes: [{name, read, write}]`). */
export interface ScopeView {
  name: string;
  read: boolean;
  write: boolean;
}

/** A role as `GET /api/roles` lists it. */
export interface RoleDetailView extends RoleView {
  scopes: ScopeView[];
  created_at: string;
  updated_at: string;
}

/** A role of the `roles` option and the `--roles FILE`; scopes default to none. */
export interface RoleInput {
  id: number;
  name: string;
  scopes?: ScopeView[];
}

/** An SSH user as the API shows it: never a password. */
export interface SshUserView {
  id: number;
  username: string;
  level: string;
  created_at: string;
  updated_at: string;
}

/** An apikey as the API shows it, token included (as the real service does). */
export interface ApikeyView {
  id: number;
  name: string;
  superuser: boolean;
  roles: RoleView[];
  token: string;
  created_at: string;
  updated_at: string;
}

/** The page cursor object of list responses. */
export interface PageCursor {
  current: number;
  next: number | null;
  previous: number | null;
}

/** An SSH user in the control API's state: whether a password is set, never the password. */
export interface SshUserState extends SshUserView {
  passwordSet: boolean;
  /** Counts every password write (create and each PUT carrying `password`), changed or not. */
  passwordVersion: number;
}

export interface EmulatorStateSnapshot {
  sshUsers: SshUserState[];
  apikeys: ApikeyView[];
  roles: RoleDetailView[];
  /** Accepted (202) writes not yet applied. */
  pendingWrites: number;
}

export interface SeedSshUser {
  username: string;
  /** @default 'n1' */
  level?: string;
  /** Left out: the user has no password (`passwordSet: false`). */
  password?: string;
}

export interface SeedApikey {
  name: string;
  /** @default false */
  superuser?: boolean;
  /** @default [] */
  roles?: number[];
}

export interface SeedData {
  sshUsers?: SeedSshUser[];
  apikeys?: SeedApikey[];
  /** Synthetic items for benchmarks: `bench-user-<id>` (no password) and `bench-key-<id>`. */
  count?: { sshUsers?: number; apikeys?: number };
}

export interface SeedResult {
  sshUsers: SshUserView[];
  apikeys: ApikeyView[];
}

/** One request to the API (never the control API), as the request log keeps it. */
export interface RequestLogEntry {
  /** 1, 2, 3... in order of arrival; not reset by clearing the log. */
  seq: number;
  method: string;
  /** The path without its query string. */
  path: string;
  query: Record<string, string>;
  /** The final status; 0 when the connection was reset without a response. */
  status: number;
  /** ISO-8601 time of arrival. */
  time: string;
  durationMs: number;
  /** Which injected fault shaped the answer, when one did: `maintenance`, `rate-limit`, `fail-rate`, `rule:<n>` or the rule's label. */
  fault?: string;
  /** A list answered 200: the `next` of its cursor object (chaos tests rebuild listings from it). */
  next?: number | null;
  /**
   * The client had closed the connection before the answer was ready (it timed out, or was
   * killed): the request was performed all the same, and nobody saw the answer.
   */
  undelivered?: true;
  /**
   * The item a write acted on, when it was performed (whatever the answer then was): the one
   * created or changed, as it became, or the one deleted, as it was. `name` is the username or
   * the apikey's name. Chaos tests tell from it what a DELETE removed.
   */
  item?: { id: number; name: string };
  /**
   * Who sent it, when its bearer token is one a test labelled (`setClientLabels`): two
   * processes writing to one service at once are told apart by the token each was given.
   */
  client?: string;
}

/**
 * One fault rule. A rule matches a request by `method` and `path`, and when it fires it does
 * one action. See fault-rules.ts for the full format.
 */
export interface FaultRule {
  /** A label for the request log's `fault` field; default `rule:<index>`. */
  label?: string;
  /** Method or methods, case-insensitive; default any. */
  method?: string | string[];
  /** A regular expression tested against the path (without query); default any. */
  path?: string;
  /** Let the first `after` matching requests through untouched. @default 0 */
  after?: number;
  /** How many times the rule fires; default unlimited. */
  times?: number;
  /** Chance that a matching request fires it (drawn from the seeded generator). @default 1 */
  probability?: number;
  /** Answer this status without doing the request (102: an interim 102, then the normal answer). */
  status?: number;
  /** With `status`: Retry-After in seconds, or an HTTP-date string sent as is. */
  retryAfter?: number | string;
  /** With `status`: Retry-After as the HTTP-date this many seconds after the answer. */
  retryAfterDateIn?: number;
  /** With `status`: the errors body; default one `rule` error naming the fault. */
  errors?: FieldError[];
  /** Destroy the connection without an answer; the request is not performed. */
  reset?: true;
  /** Perform the request, then lose the answer: reset the connection, or answer 500/502/504. */
  commitThenFail?: 'reset' | 500 | 502 | 504;
  /** Wait this long first; alone, the request then proceeds normally. */
  delayMs?: number;
  /**
   * Hold the request until the test releases it (`releaseHeld()`, `POST /_emulator/release`):
   * `before` it is performed, or `after` (performed, a write committed; its answer held back).
   */
  hold?: 'before' | 'after';
  /** Perform the request, then answer 200 with a truncated, invalid JSON body. */
  malformed?: true;
  /** List routes: `next` advances only half a page, so the next page repeats items. */
  duplicatePage?: true;
  /** List routes: `next` points back to an earlier cursor (the previous page, or this one). */
  cursorLoop?: true;
  /** List routes: the page's items come in a shuffled order (seeded); the cursor is unchanged. */
  reorderPage?: true;
  /**
   * The bearer token of this request expires now: it answers 401 (expired), and so does every
   * later request that carries it. Tokens added with `setTokens` stay valid.
   */
  expireToken?: true;
  /**
   * Another client changes the item first, just before this request is performed: `create`
   * posts the same body (so creating an SSH user answers 409), `delete` deletes the item the
   * path names (so an update or delete answers 404). Ignored where it does not apply.
   */
  concurrentWrite?: 'create' | 'delete';
  /**
   * Another client's request, performed just before this one, which then proceeds as usual:
   * `{ method: 'PUT', path: '/api/sshusers/3', body: { username: 'alice' } }` renames a user
   * between a listing and the writes that follow it. One the service refuses is not made.
   */
  anotherClient?: AnotherClientRequest;
  /**
   * List routes: as this page is served, another client renames item `id` (of the listed kind)
   * to `to`. A service that sorts by name then lists it again, under its new name, on this page
   * when it lay on an earlier one: one listing shows one id with two names.
   */
  shiftPage?: { id: number; to: string };
  /**
   * With `status`: the error body quotes the request (its body, every string in it, the bearer
   * token, and the token of the apikey the path names) raw, JSON-escaped and URL-encoded, as a
   * careless service does: `json` as `{"errors": [...]}`, `text` as a text/html page (a proxy's).
   */
  echo?: 'json' | 'text';
  /**
   * Answer 200 with a JSON body that never ends (a list's items, again and again), at the pace
   * the client reads it, until the client hangs up. Nothing is performed.
   */
  endless?: true;
  /** Once the rule has fired, it fires only within this many ms of its first firing (a window). */
  forMs?: number;
}

/** A request of another client (the `anotherClient` fault). */
export interface AnotherClientRequest {
  method: 'POST' | 'PUT' | 'DELETE';
  /** An API path, e.g. `/api/sshusers/3`. */
  path: string;
  body?: Record<string, unknown>;
}

/** The bearer tokens the emulator accepts, changed at run time by `setTokens` (rotation). */
export interface TokenSettings {
  tokens?: string[];
  readOnlyTokens?: string[];
  expiredTokens?: string[];
}

export interface FaultSettings {
  /** Requests per second of the token bucket; null = unlimited. */
  rateLimit: number | null;
  /** Bucket capacity; null = one second's worth (at least 1). */
  rateLimitBurst: number | null;
  /**
   * false: the rate limit's 503s carry no Retry-After (the service's documentation promises
   * none); absent or true: the wait for the next token, in whole seconds (at least 1).
   */
  rateLimitRetryAfter?: boolean;
  /** Mean added latency; each request waits a uniform draw from 0.5 L to 1.5 L. */
  latencyMs: number;
  /** Chance, 0..1, that a request answers 500, 502 or 504 without being performed. */
  failRate: number;
  /** Every API request answers 503. */
  maintenance: boolean;
  /** Writes answer 202 and take effect `asyncDelayMs` later. */
  asyncWrites: boolean;
  asyncDelayMs: number;
  rules: FaultRule[];
}

/** Per-rule counters, in the order of `rules`. */
export interface FaultRuleStats {
  matched: number;
  fired: number;
}
