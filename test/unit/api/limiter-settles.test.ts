import { describe, expect, it } from 'vitest';
import { simulate } from './limiter-simulator.js';

/**
 * The control law against a simulated token-bucket server in virtual time (deterministic,
 * independent of the machine). Loose bounds: the benchmark reports the real figures.
 */
describe('the adaptive limiter settles near a hidden server limit with few 503s', () => {
  it('discovers a limit of 100/s behind a one-second bucket that answers Retry-After: 1 (the emulator)', async () => {
    const result = await simulate({ limit: 100, burst: 100, latencyMs: 4, jitterMs: 1, requests: 3000, retryAfterSeconds: 1 });
    expect(result.ratio).toBeGreaterThan(0.85);
    expect(result.throttledPerThousand).toBeLessThan(5);
  });

  it('discovers a limit of 100/s behind a small bucket without Retry-After', async () => {
    const result = await simulate({ limit: 100, burst: 5, latencyMs: 4, jitterMs: 1, requests: 3000 });
    expect(result.ratio).toBeGreaterThan(0.8);
    expect(result.throttledPerThousand).toBeLessThan(5);
  });

  it('with the limit configured as a ceiling it runs at the limit without provoking 503s', async () => {
    const result = await simulate({ limit: 100, burst: 100, latencyMs: 4, jitterMs: 1, requests: 3000, ceiling: 100, retryAfterSeconds: 1 });
    expect(result.ratio).toBeGreaterThan(0.95);
    expect(result.throttledPerThousand).toBeLessThanOrEqual(1);
  });

  it('finds a higher limit too', async () => {
    const result = await simulate({ limit: 400, burst: 400, latencyMs: 2, requests: 8000, concurrency: 16, retryAfterSeconds: 1 });
    expect(result.ratio).toBeGreaterThan(0.8);
    expect(result.throttledPerThousand).toBeLessThan(5);
  });
});

describe('the rate follows what is used', () => {
  it('does not run away when concurrency and latency, not the server, hold the pace down', async () => {
    // 2 in flight × 40 ms each: at most 50 requests/s, whatever the rate says.
    const result = await simulate({ limit: 10_000, burst: 10_000, latencyMs: 40, requests: 2000, concurrency: 2 });
    expect(result.throttled).toBe(0);
    expect(result.finalRate).toBeLessThan(150);
  });
});
