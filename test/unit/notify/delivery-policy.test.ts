import { describe, expect, it } from 'vitest';
import { decideDelivery, type WebhookOutcome } from '../../../src/notify/index.js';

const options = { maxAttempts: 5, baseDelayMs: 1000, maxDelayMs: 60_000 };
const half = () => 0.5;

describe('which deliveries are tried again, and when', () => {
  it.each<[string, WebhookOutcome, string]>([
    ['200', { kind: 'response', status: 200 }, 'sent'],
    ['204', { kind: 'response', status: 204 }, 'sent'],
    ['500', { kind: 'response', status: 500 }, 'retry'],
    ['502', { kind: 'response', status: 502 }, 'retry'],
    ['503', { kind: 'response', status: 503 }, 'retry'],
    ['429', { kind: 'response', status: 429 }, 'retry'],
    ['408', { kind: 'response', status: 408 }, 'retry'],
    ['a timeout', { kind: 'failure', code: 'timeout' }, 'retry'],
    ['a refused connection', { kind: 'failure', code: 'ECONNREFUSED' }, 'retry'],
    ['a reset', { kind: 'failure', code: 'ECONNRESET' }, 'retry'],
    ['400', { kind: 'response', status: 400 }, 'failed'],
    ['401', { kind: 'response', status: 401 }, 'failed'],
    ['404', { kind: 'response', status: 404 }, 'failed'],
    ['a redirect (301)', { kind: 'response', status: 301 }, 'failed'],
  ])('%s -> %s', (_name, outcome, kind) => {
    expect(decideDelivery(1, outcome, half, options).kind).toBe(kind);
  });

  it('backoff: exponential steps, full jitter, capped; Retry-After is a floor, capped too', () => {
    const delays = [1, 2, 3, 4].map((attempt) => decideDelivery(attempt, { kind: 'failure', code: 'timeout' }, half, { ...options, maxAttempts: 10 }));
    expect(delays).toEqual([500, 1000, 2000, 4000].map((delayMs) => ({ kind: 'retry', delayMs, reason: 'timeout' })));
    expect(decideDelivery(20, { kind: 'failure', code: 'timeout' }, () => 0.999999, { ...options, maxAttempts: 30 })).toMatchObject({ delayMs: 59_999 });
    expect(decideDelivery(1, { kind: 'response', status: 503 }, () => 0, options, 30_000)).toMatchObject({ delayMs: 30_000 });
    expect(decideDelivery(1, { kind: 'response', status: 503 }, () => 0, options, 3_600_000)).toMatchObject({ delayMs: 60_000 });
  });

  it('the last attempt fails with the reason of its outcome', () => {
    expect(decideDelivery(5, { kind: 'response', status: 503 }, half, options)).toEqual({ kind: 'failed', reason: 'http_503' });
    expect(decideDelivery(5, { kind: 'failure', code: 'timeout' }, half, options)).toEqual({ kind: 'failed', reason: 'timeout' });
  });
});
