import { EventEmitter } from 'node:events';
import type { Kind } from '../model/index.js';
import type { ApiErrorCode } from './api-error.js';

/** One attempt of one request, once it is known whether the call goes on. Carries no ids, bodies or tokens. */
export interface RequestEvent {
  readonly method: string;
  /** Route template, e.g. `/api/sshusers/{id}`: low cardinality, fit for metric labels. */
  readonly route: string;
  /** HTTP status; undefined when no response came. */
  readonly status: number | undefined;
  /** `timeout`, `network` or the error code (ECONNRESET, ...) when no response came. */
  readonly error: string | undefined;
  readonly durationMs: number;
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** The limiter's rate (req/s) when the attempt was sent. */
  readonly rate: number;
  /** Set when the call goes on: the wait before the next attempt (a `retry` event follows). */
  readonly retryDelayMs?: number | undefined;
}

/** A failed attempt will be repeated. */
export interface RetryEvent {
  readonly method: string;
  readonly route: string;
  /** The attempt that failed. */
  readonly attempt: number;
  readonly delayMs: number;
  /** Why: the code the failure would have ended with. */
  readonly reason: ApiErrorCode;
  readonly status: number | undefined;
  /** Where the delay came from: the server's Retry-After, backoff, or a re-read token (no delay). */
  readonly source: 'retry_after' | 'backoff' | 'token_reloaded';
}

/** The server pushed back (503/429): the limiter slowed down and/or paused. */
export interface ThrottleEvent {
  readonly method: string;
  readonly route: string;
  readonly status: number;
  readonly previousRate: number;
  readonly rate: number;
  /** false when the same overload had already lowered the rate. */
  readonly decreased: boolean;
  /** The whole limiter is paused this long (Retry-After); 0 when not. */
  readonly pauseMs: number;
}

/** A page of a listing arrived (the live output's progress); `items` not seen on an earlier page. */
export interface PageEvent {
  readonly kind: Kind;
  readonly items: number;
}

/** The token file was re-read after a 401. */
export interface TokenEvent {
  readonly method: string;
  readonly route: string;
  /** Whether a different token was found (and the request is repeated with it). */
  readonly changed: boolean;
}

/**
 * What happened to the integrator key and its access tokens. Never a token: only what
 * happened, an errno-like code, and the key file's path.
 */
export type CredentialEvent =
  /** The first access token (`exchanged`) or a later one (`renewed`). */
  | { readonly action: 'exchanged' | 'renewed'; readonly expiresInSeconds: number | undefined }
  /**
   * The service rotated the key; `persisted`: written back to its file. `kept` (not persisted):
   * amsync goes on with it from memory (the daemon); false: the run fails with
   * integrator_key_not_persisted, whose message says it all.
   */
  | { readonly action: 'rotated'; readonly persisted: boolean; readonly firstTime?: boolean; readonly kept?: boolean }
  /** A rotated key could not be written back: a restart would use the old key. `kept` as above. */
  | { readonly action: 'write_back_failed'; readonly error: string; readonly file: string; readonly kept?: boolean }
  /** A renewal failed while the access token still works: it is used, and renewal tried again later. */
  | { readonly action: 'renewal_deferred'; readonly error: string }
  /** The service refused the key. */
  | { readonly action: 'rejected' };

export interface ClientEventMap {
  request: [RequestEvent];
  retry: [RetryEvent];
  throttle: [ThrottleEvent];
  token: [TokenEvent];
  page: [PageEvent];
  credential: [CredentialEvent];
}

/** `client.events.on('request', (event) => ...)`. Listeners run synchronously; their errors are ignored. */
export type ClientEvents = EventEmitter<ClientEventMap>;

export function createClientEvents(): ClientEvents {
  return new EventEmitter<ClientEventMap>();
}

/** Emits without letting a faulty listener (a logger, a metric) break the request. */
export function emitSafely<K extends keyof ClientEventMap>(events: ClientEvents, name: K, ...args: ClientEventMap[K]): void {
  try {
    (events.emit as (name: K, ...args: ClientEventMap[K]) => boolean)(name, ...args);
  } catch {
    // Observability must never change the outcome of a call.
  }
}
