import { isTlsCause, networkCause } from './network-errors.js';
import { parseRetryAfter } from './retry-after.js';
import { retryDefaults } from '../settings/index.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * What went wrong with one attempt, as far as retrying is concerned.
 * `sent: false` means the request provably never left (DNS failure, refused connection,
 * connect timeout), so even a POST can be repeated safely.
 */
export type AttemptFailure = (
  | { readonly kind: 'status'; readonly method: HttpMethod; readonly status: number }
  | {
      readonly kind: 'network';
      readonly method: HttpMethod;
      readonly errorCode: string;
      readonly sent: boolean;
      /** The service has answered this client before: a refused connection is then a restart, not a wrong URL. */
      readonly reached: boolean;
    }
  | { readonly kind: 'timeout'; readonly method: HttpMethod; readonly sent: boolean }
) & {
  /**
   * A POST that is harmless to repeat whatever the first attempt did (the token exchange: a
   * second access token; a key rotated by an answer that was lost is lost either way): retried
   * as a PUT would be.
   */
  readonly repeatable?: true;
};

export interface RetryOptions {
  /** Attempts in all, the first included. @default 8 */
  readonly maxAttempts: number;
  /** No retry is scheduled that would end later than this after the first attempt. @default 120_000 */
  readonly maxElapsedMs: number;
  /**
   * The same bound while the service has never answered and the connection cannot be made
   * (refused, DNS, no route): a wrong URL or a service that is not running fails in about
   * two seconds instead of the whole budget. @default 2_000
   */
  readonly maxConnectElapsedMs: number;
  /** Backoff base: the n-th retry waits a random time in [0, min(cap, base * 2^(n-1))). @default 250 */
  readonly baseDelayMs: number;
  /** Backoff cap. @default 30_000 */
  readonly maxDelayMs: number;
  /** A longer Retry-After is shortened to this. @default 300_000 (5 minutes) */
  readonly maxRetryAfterMs: number;
}

/** The one set of defaults, declared with the other settings (src/settings/retry-defaults.ts). */
export const defaultRetryOptions: RetryOptions = { ...retryDefaults };

export interface RetryPolicyOptions extends RetryOptions {
  /** Uniform in [0, 1); injected so the jitter is reproducible in tests. */
  readonly random: () => number;
}

export type StopReason =
  /** The failure is final (a 4xx, or a 500 answering a POST). */
  | 'not_retryable'
  /** A POST may or may not have been applied: it is never repeated blindly. */
  | 'unknown_outcome'
  | 'max_attempts'
  | 'max_elapsed'
  /** The server asked for a longer wait than the retry budget has left: waiting would be in vain. */
  | 'retry_after_exceeds_budget';

type PlainStopReason = Exclude<StopReason, 'retry_after_exceeds_budget'>;

export type RetryDecision =
  | { readonly delayMs: number; readonly source: 'retry_after' | 'backoff' }
  | { readonly stop: PlainStopReason }
  | {
      readonly stop: 'retry_after_exceeds_budget';
      /** What the server asked for (before the cap). */
      readonly retryAfterMs: number;
      /** What was left of maxElapsedMs. */
      readonly budgetLeftMs: number;
    };

const retriedForEveryMethod = new Set([102, 429, 503]);
const retriedWhenIdempotent = new Set([500, 502, 504]);
// A 502 or 504 says the request reached the service but not whether it was carried out.
const outcomeUnknownStatuses = new Set([502, 504]);

function isIdempotent(failure: AttemptFailure): boolean {
  return failure.method !== 'POST' || failure.repeatable === true;
}

function classify(failure: AttemptFailure): 'retry' | PlainStopReason {
  if (failure.kind === 'status') {
    if (retriedForEveryMethod.has(failure.status)) return 'retry';
    if (retriedWhenIdempotent.has(failure.status)) {
      if (isIdempotent(failure)) return 'retry';
      return outcomeUnknownStatuses.has(failure.status) ? 'unknown_outcome' : 'not_retryable';
    }
    return 'not_retryable';
  }
  // A handshake that fails the same way every time: a wrong scheme or an untrusted certificate.
  if (failure.kind === 'network' && isTlsCause(networkCause(failure.errorCode))) return 'not_retryable';
  if (!failure.sent) return 'retry';
  return isIdempotent(failure) ? 'retry' : 'unknown_outcome';
}

/** Before the service ever answered, a connection that cannot be made gets the short budget. */
function budgetFor(failure: AttemptFailure, options: RetryOptions): number {
  const connectPhase = failure.kind === 'network' && !failure.sent && !failure.reached && networkCause(failure.errorCode) !== 'other';
  return connectPhase ? Math.min(options.maxElapsedMs, options.maxConnectElapsedMs) : options.maxElapsedMs;
}

/**
 * Whether and when to try again after a failed attempt. Pure: the clock and the randomness
 * come in as arguments.
 *
 * @param attempt  the attempt that just failed, from 1
 * @param failure  what went wrong
 * @param retryAfter  the raw `Retry-After` header of the response, if any
 * @param wallNowMs  wall-clock epoch ms (for the HTTP-date form of Retry-After)
 * @param elapsedMs  time since the first attempt started
 */
export function decideRetry(
  attempt: number,
  failure: AttemptFailure,
  retryAfter: string | undefined,
  wallNowMs: number,
  elapsedMs: number,
  options: RetryPolicyOptions,
): RetryDecision {
  const verdict = classify(failure);
  if (verdict !== 'retry') return { stop: verdict };
  if (attempt >= options.maxAttempts) return { stop: 'max_attempts' };

  const budgetMs = budgetFor(failure, options);
  const serverDelay = failure.kind === 'status' ? parseRetryAfter(retryAfter, wallNowMs) : undefined;
  if (serverDelay !== undefined) {
    const delayMs = Math.min(serverDelay, options.maxRetryAfterMs);
    if (elapsedMs + delayMs > budgetMs) {
      return { stop: 'retry_after_exceeds_budget', retryAfterMs: serverDelay, budgetLeftMs: Math.max(0, budgetMs - elapsedMs) };
    }
    return { delayMs, source: 'retry_after' };
  }
  // Full jitter (AWS architecture blog, "Exponential Backoff And Jitter"): spreads retries of
  // many callers evenly instead of in synchronised waves.
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (attempt - 1));
  const delayMs = Math.floor(options.random() * ceiling);
  if (elapsedMs + delayMs > budgetMs) return { stop: 'max_elapsed' };
  return { delayMs, source: 'backoff' };
}
