import { describe, expect, it } from 'vitest';
import { decideRetry, defaultRetryOptions, type AttemptFailure, type HttpMethod, type RetryPolicyOptions } from '../../../src/api/retry-policy.js';
import { parseRetryAfter } from '../../../src/api/retry-after.js';

const now = Date.parse('2025-03-01T12:00:00Z');
const options = (random = 0.5, overrides: Partial<RetryPolicyOptions> = {}): RetryPolicyOptions => ({
  ...defaultRetryOptions,
  random: () => random,
  ...overrides,
});
const status = (method: HttpMethod, code: number): AttemptFailure => ({ kind: 'status', method, status: code });
const network = (method: HttpMethod, errorCode: string, sent: boolean, reached = false): AttemptFailure => ({ kind: 'network', method, errorCode, sent, reached });
const timeout = (method: HttpMethod, sent: boolean): AttemptFailure => ({ kind: 'timeout', method, sent });

describe('what is retried', () => {
  const methods: HttpMethod[] = ['GET', 'POST', 'PUT', 'DELETE'];

  it.each(methods.flatMap((method) => [503, 429, 102].map((code) => [method, code] as const)))('%s %i is retried for every method', (method, code) => {
    expect(decideRetry(1, status(method, code), undefined, now, 0, options())).toHaveProperty('delayMs');
  });

  it.each(methods.flatMap((method) => ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN'].map((code) => [method, code] as const)))(
    '%s %s before sending is retried for every method',
    (method, code) => {
      expect(decideRetry(1, network(method, code, false), undefined, now, 0, options())).toHaveProperty('delayMs');
    },
  );

  it.each(methods.filter((m) => m !== 'POST'))('%s connect timeout (before sending) is retried', (method) => {
    expect(decideRetry(1, timeout(method, false), undefined, now, 0, options())).toHaveProperty('delayMs');
  });
  it('POST connect timeout (before sending) is retried too', () => {
    expect(decideRetry(1, timeout('POST', false), undefined, now, 0, options())).toHaveProperty('delayMs');
  });

  const idempotentOnly: [string, (m: HttpMethod) => AttemptFailure][] = [
    ['500', (m) => status(m, 500)],
    ['502', (m) => status(m, 502)],
    ['504', (m) => status(m, 504)],
    ['a timeout after sending', (m) => timeout(m, true)],
    ['a reset', (m) => network(m, 'ECONNRESET', true)],
  ];
  it.each(idempotentOnly.flatMap(([name, make]) => (['GET', 'PUT', 'DELETE'] as const).map((m) => [m, name, make] as const)))(
    '%s on %s is retried (repeating it is safe)',
    (method, _name, make) => {
      expect(decideRetry(1, make(method), undefined, now, 0, options())).toHaveProperty('delayMs');
    },
  );

  it.each([
    ['502', status('POST', 502), 'unknown_outcome'],
    ['504', status('POST', 504), 'unknown_outcome'],
    ['a timeout after sending', timeout('POST', true), 'unknown_outcome'],
    ['a reset after sending', network('POST', 'ECONNRESET', true), 'unknown_outcome'],
    ['500', status('POST', 500), 'not_retryable'],
  ] as const)('a POST on %s is never repeated: %s', (_name, failure, stop) => {
    expect(decideRetry(1, failure, undefined, now, 0, options())).toEqual({ stop });
  });

  it.each([
    ['500', status('POST', 500)],
    ['502', status('POST', 502)],
    ['504', status('POST', 504)],
    ['a timeout after sending', timeout('POST', true)],
    ['a reset after sending', network('POST', 'ECONNRESET', true)],
  ] as const)('a POST harmless to repeat (the token exchange) on %s is retried', (_name, failure) => {
    expect(decideRetry(1, { ...failure, repeatable: true }, undefined, now, 0, options())).toHaveProperty('delayMs');
  });

  it.each([400, 401, 403, 404, 405, 409, 301])('%i is final', (code) => {
    expect(decideRetry(1, status('GET', code), undefined, now, 0, options())).toEqual({ stop: 'not_retryable' });
  });
});

describe('exponential backoff with full jitter', () => {
  it.each([
    // attempt, random, expected delay: random * min(30 s, 250 ms * 2^(attempt-1))
    [1, 0.5, 125],
    [2, 0.5, 250],
    [3, 0.5, 500],
    [4, 0.999, 1998],
    [1, 0, 0],
    [8, 0.5, 15_000],
    [9, 0.5, 15_000],
    [20, 0.999, 29_970],
  ])('attempt %i with random %d waits %i ms', (attempt, random, delay) => {
    const policy = options(random, { maxAttempts: 100, maxElapsedMs: Number.POSITIVE_INFINITY });
    expect(decideRetry(attempt, status('GET', 503), undefined, now, 0, policy)).toEqual({ delayMs: delay, source: 'backoff' });
  });
});

describe('Retry-After', () => {
  it.each([
    ['delay-seconds', '3', 3000],
    ['zero', '0', 0],
    ['an HTTP-date', 'Sat, 01 Mar 2025 12:00:10 GMT', 10_000],
    ['an HTTP-date in the past', 'Sat, 01 Mar 2025 11:00:00 GMT', 0],
    ['rfc850-date', 'Saturday, 01-Mar-25 12:00:05 GMT', 5000],
    ['asctime-date', 'Sat Mar  1 12:00:07 2025', 7000],
  ])('%s (%s) gives %i ms', (_name, header, expected) => {
    expect(decideRetry(1, status('GET', 503), header, now, 0, options())).toEqual({ delayMs: expected, source: 'retry_after' });
  });

  it('is capped at five minutes', () => {
    const policy = options(0.5, { maxElapsedMs: Number.POSITIVE_INFINITY });
    expect(decideRetry(1, status('GET', 429), '3600', now, 0, policy)).toEqual({ delayMs: 300_000, source: 'retry_after' });
    expect(decideRetry(1, status('GET', 429), 'Sat, 01 Mar 2025 18:00:00 GMT', now, 0, policy)).toEqual({ delayMs: 300_000, source: 'retry_after' });
  });

  it.each(['soon', '1.5', '-3', '', '2025-03-01'])('falls back to backoff on an unparseable value %j', (header) => {
    expect(decideRetry(1, status('GET', 503), header, now, 0, options())).toEqual({ delayMs: 125, source: 'backoff' });
  });

  it('parseRetryAfter alone', () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter(' 12 ', now)).toBe(12_000);
    expect(parseRetryAfter('Sat, 01 Mar 2025 12:01:00 GMT', now)).toBe(60_000);
  });
});

describe('bounded attempts and elapsed time', () => {
  it('stops at maxAttempts', () => {
    const policy = options(0.5, { maxAttempts: 3 });
    expect(decideRetry(2, status('GET', 503), undefined, now, 0, policy)).toHaveProperty('delayMs');
    expect(decideRetry(3, status('GET', 503), undefined, now, 0, policy)).toEqual({ stop: 'max_attempts' });
  });

  it('does not schedule a retry that would end past maxElapsedMs', () => {
    const policy = options(0.5, { maxElapsedMs: 10_000 });
    expect(decideRetry(1, status('GET', 503), '5', now, 5_000, policy)).toEqual({ delayMs: 5000, source: 'retry_after' });
    // The server's wait does not fit what is left: the stop says how long it asked for.
    expect(decideRetry(1, status('GET', 503), '6', now, 5_000, policy)).toEqual({ stop: 'retry_after_exceeds_budget', retryAfterMs: 6000, budgetLeftMs: 5000 });
    // A backoff that would end past the bound stops too.
    expect(decideRetry(8, status('GET', 503), undefined, now, 9_000, options(0.5, { maxElapsedMs: 10_000, maxAttempts: 100 }))).toEqual({ stop: 'max_elapsed' });
  });

  it('a final failure stops even on the first attempt, before any bound', () => {
    expect(decideRetry(99, status('GET', 404), undefined, now, 1e9, options())).toEqual({ stop: 'not_retryable' });
  });

  it('is pure: the same inputs give the same decision', () => {
    const a = decideRetry(3, status('PUT', 502), undefined, now, 1000, options(0.3));
    const b = decideRetry(3, status('PUT', 502), undefined, now, 1000, options(0.3));
    expect(a).toEqual(b);
  });
});

/** Runs the policy as the executor would, attempts taking no time: the attempts and the time spent. */
function simulate(failure: AttemptFailure, policy: RetryPolicyOptions): { attempts: number; elapsedMs: number; stop: string } {
  let elapsedMs = 0;
  for (let attempt = 1; ; attempt += 1) {
    const decision = decideRetry(attempt, failure, undefined, now, elapsedMs, policy);
    if ('stop' in decision) return { attempts: attempt, elapsedMs, stop: decision.stop };
    elapsedMs += decision.delayMs;
  }
}

describe('a service that cannot be reached fails fast', () => {
  const connectCodes = ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH'];

  it.each(connectCodes.flatMap((code) => [0, 0.5, 0.999].map((random) => [code, random] as const)))(
    '%s before the service ever answered: retried within the two-second connect budget (random %d)',
    (code, random) => {
      const run = simulate(network('GET', code, false), options(random));
      expect(run.attempts).toBeGreaterThan(1);
      expect(run.elapsedMs).toBeLessThanOrEqual(2000);
      expect(run.stop).toMatch(/^max_(elapsed|attempts)$/);
    },
  );

  it('the same failure after the service has answered is a restart: the full budget and attempts', () => {
    const run = simulate(network('GET', 'ECONNREFUSED', false, true), options(0.5));
    expect(run).toEqual({ attempts: 8, elapsedMs: 125 + 250 + 500 + 1000 + 2000 + 4000 + 8000, stop: 'max_attempts' });
  });

  it('the connect budget never exceeds maxElapsedMs', () => {
    const run = simulate(network('GET', 'ECONNREFUSED', false), options(0.999, { maxElapsedMs: 500 }));
    expect(run.elapsedMs).toBeLessThanOrEqual(500);
  });

  const tlsCodes = [
    'EPROTO',
    'ERR_SSL_WRONG_VERSION_NUMBER',
    'DEPTH_ZERO_SELF_SIGNED_CERT',
    'SELF_SIGNED_CERT_IN_CHAIN',
    'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
    'CERT_HAS_EXPIRED',
    'ERR_TLS_CERT_ALTNAME_INVALID',
  ];
  it.each((['GET', 'POST', 'PUT', 'DELETE'] as const).flatMap((method) => tlsCodes.map((code) => [method, code] as const)))(
    '%s failing with %s is never retried (a TLS failure does not pass by itself)',
    (method, code) => {
      expect(decideRetry(1, network(method, code, true), undefined, now, 0, options())).toEqual({ stop: 'not_retryable' });
      expect(decideRetry(1, network(method, code, false), undefined, now, 0, options())).toEqual({ stop: 'not_retryable' });
    },
  );
});

describe('a Retry-After longer than the budget left', () => {
  it('stops at once and says how long the service asked for and what was left', () => {
    expect(decideRetry(1, status('POST', 503), '150', now, 0, options(0.5, { maxElapsedMs: 120_000 }))).toEqual({
      stop: 'retry_after_exceeds_budget',
      retryAfterMs: 150_000,
      budgetLeftMs: 120_000,
    });
  });

  it('names the wait the service asked for, not the capped one', () => {
    expect(decideRetry(2, status('GET', 429), '86400', now, 30_000, options())).toEqual({
      stop: 'retry_after_exceeds_budget',
      retryAfterMs: 86_400_000,
      budgetLeftMs: 90_000,
    });
  });

  it('a wait that fits is waited', () => {
    expect(decideRetry(1, status('GET', 503), '119', now, 0, options(0.5, { maxElapsedMs: 120_000 }))).toEqual({ delayMs: 119_000, source: 'retry_after' });
  });
});
