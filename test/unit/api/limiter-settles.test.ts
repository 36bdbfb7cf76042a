import { describe, expect, it } from 'vitest';
import { emulatorLike, simulate } from './limiter-simulator.js';

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

describe('the whole rate at any latency (DESIGN.md §7: ≥ 0.95 of R with --rate at R·L up to 20)', () => {
  for (const latencyMs of [50, 100]) {
    it(`--rate 200 against a server of 200/s at ${latencyMs} ms (R·L ${(200 * latencyMs) / 1000})`, async () => {
      const result = await simulate({ limit: 200, burst: 200, latencyMs, requests: 2000, listPages: 10, ceiling: 200, ...emulatorLike });
      expect(result.ratio).toBeGreaterThan(0.97);
      expect(result.throttled).toBe(0);
      expect(result.maxInFlight).toBeGreaterThan((200 * latencyMs) / 1000);
    });
  }

  it('on a busy machine (the event loop held 30 ms before 1 % of events) the stalls are made up', async () => {
    const result = await simulate({ limit: 200, burst: 200, latencyMs: 50, requests: 2000, listPages: 10, ceiling: 200, ...emulatorLike, stallChance: 0.01, stallMs: 30 });
    expect(result.ratio).toBeGreaterThan(0.95);
    expect(result.throttled).toBe(0);
  });
});

describe('gentle discovery of a limit hidden behind a one-second burst (≥ 0.90 of R, ≤ 5 503s per 1,000 calls)', () => {
  for (const [limit, latencyMs] of [
    [50, 20],
    [200, 20],
    [200, 50],
    [200, 100],
  ] as const) {
    it(`R = ${limit}/s, L = ${latencyMs} ms, after a listing`, async () => {
      const result = await simulate({ limit, burst: limit, latencyMs, requests: 2000, listPages: 10, ...emulatorLike });
      expect(result.ratio).toBeGreaterThan(0.9);
      expect(result.throttledPerThousand).toBeLessThanOrEqual(5);
    });
  }

  it('a client short of CPU (2 ms a call, 500 calls/s at most) sees the first 503 late: R = 200/s, L = 50 ms still costs few', async () => {
    // What reaches the server in the moment before the client handles the first 503 meets an
    // empty bucket; the faster slow start was going when the burst ran out, the more (a
    // doubling every half second gave 17-27 503s here, 8-13 per 1,000).
    for (const seed of [1, 2, 3]) {
      const result = await simulate({ limit: 200, burst: 200, latencyMs: 50, requests: 2000, listPages: 10, ...emulatorLike, clientCpuMs: 2, seed });
      expect(result.throttledPerThousand).toBeLessThanOrEqual(5);
      expect(result.ratio).toBeGreaterThan(0.9);
    }
  });

  it('a client whose loop is saturated (3 ms a call, 333 calls/s at most; L = 100 ms) stops raising the rate: few 503s', async () => {
    // Raising the rate past what the client's own loop can send only queues requests inside
    // it; they go out after the server has said stop (11-13 503s per run here before the
    // limiter looked at the loop's load).
    for (const seed of [1, 2, 3]) {
      const result = await simulate({ limit: 200, burst: 200, latencyMs: 100, requests: 2000, listPages: 10, ...emulatorLike, clientCpuMs: 3, seed });
      expect(result.throttledPerThousand).toBeLessThanOrEqual(5);
      expect(result.ratio).toBeGreaterThan(0.9);
    }
  });

  it('a server that queues shows it in its latency first: the limiter holds there, and no 503 comes', async () => {
    const result = await simulate({ limit: 100, burst: 1, latencyMs: 20, requests: 2000, server: 'queue', queueLimit: 20, retryAfterSeconds: 1 });
    expect(result.throttled).toBe(0);
    expect(result.ratio).toBeGreaterThan(0.9);
  });

  it('a listing against a hidden limit: unpaced at first, paced once the limit shows', async () => {
    const result = await simulate({ limit: 200, burst: 200, latencyMs: 2, requests: 2000, chains: 2, ...emulatorLike });
    expect(result.ratio).toBeGreaterThan(0.9);
    expect(result.throttledPerThousand).toBeLessThanOrEqual(5);
  });
});

describe('a small no-op sync is as fast as its round trips allow', () => {
  it('two serial chains of 20 pages at 20 ms take 0.4 s, as a plain script would', async () => {
    const result = await simulate({ limit: 100_000, burst: 100_000, latencyMs: 20, requests: 40, chains: 2, uniformLatency: false });
    expect(result.seconds).toBeCloseTo(0.4, 5);
  });
});
