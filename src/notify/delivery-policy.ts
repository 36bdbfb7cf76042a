import type { WebhookOutcome } from './webhook-transport.js';

export interface DeliveryPolicyOptions {
  /** Attempts per notification, the first included. */
  readonly maxAttempts: number;
  /** First backoff step; it doubles per attempt. */
  readonly baseDelayMs: number;
  /** Longest single backoff, a Retry-After included. */
  readonly maxDelayMs: number;
}

export type DeliveryDecision =
  | { readonly kind: 'sent' }
  | { readonly kind: 'retry'; readonly delayMs: number; readonly reason: string }
  | { readonly kind: 'failed'; readonly reason: string };

/**
 * What to do after attempt number `attempt` (1-based) ended with `outcome`. Pure. A 2xx is
 * delivered; 408, 425, 429, 5xx, a timeout or a network failure is tried again after an
 * exponential backoff with full jitter (`random()` in [0, 1)), at least the Retry-After a 429 or
 * 503 asked for, never longer than maxDelayMs, until maxAttempts; anything else (a 3xx: a
 * redirect is never followed; a 4xx: the receiver refuses this body) fails at once.
 */
export function decideDelivery(attempt: number, outcome: WebhookOutcome, random: () => number, options: DeliveryPolicyOptions, retryAfterMs?: number): DeliveryDecision {
  let reason: string;
  if (outcome.kind === 'response') {
    if (outcome.status >= 200 && outcome.status < 300) return { kind: 'sent' };
    reason = `http_${outcome.status}`;
    if (!retryableStatus(outcome.status)) return { kind: 'failed', reason };
  } else {
    reason = outcome.code;
  }
  if (attempt >= options.maxAttempts) return { kind: 'failed', reason };
  const step = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** Math.min(attempt - 1, 30));
  const jitter = Math.floor(Math.min(Math.max(random(), 0), 1) * step);
  const asked = retryAfterMs === undefined ? 0 : Math.min(retryAfterMs, options.maxDelayMs);
  return { kind: 'retry', delayMs: Math.max(jitter, asked), reason };
}

function retryableStatus(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || (status >= 500 && status <= 599);
}
