import { describe, expect, it } from 'vitest';
import { defaultBurst, TokenBucket } from '../../../src/emulator/token-bucket.js';

describe('token bucket', () => {
  it('lets a burst through, then refuses with the time until the next token', () => {
    let now = 0;
    const bucket = new TokenBucket(2, 2, () => now);
    expect(bucket.take()).toEqual({ ok: true });
    expect(bucket.take()).toEqual({ ok: true });
    const refused = bucket.take();
    expect(refused.ok).toBe(false);
    expect(refused.ok === false && refused.retryAfterMs).toBe(500);
    now += 250;
    const half = bucket.take();
    expect(half.ok === false && half.retryAfterMs).toBe(250);
    now += 250;
    expect(bucket.take()).toEqual({ ok: true });
  });

  it('refills at the rate and never beyond the burst', () => {
    let now = 0;
    const bucket = new TokenBucket(10, 3, () => now);
    for (let i = 0; i < 3; i += 1) expect(bucket.take().ok).toBe(true);
    now += 60_000;
    let passed = 0;
    while (bucket.take().ok) passed += 1;
    expect(passed).toBe(3);
  });

  it('admits rate × seconds requests over a long run', () => {
    let now = 0;
    const bucket = new TokenBucket(50, 1, () => now);
    let passed = 0;
    for (let t = 0; t < 10_000; t += 1) {
      now = t;
      if (bucket.take().ok) passed += 1;
    }
    expect(passed).toBe(500);
  });

  it('does not drain when the clock steps back', () => {
    let now = 1000;
    const bucket = new TokenBucket(1, 1, () => now);
    expect(bucket.take().ok).toBe(true);
    now = 0;
    expect(bucket.take().ok).toBe(false);
    now = 1000;
    expect(bucket.take().ok).toBe(true);
  });

  it('checks its options loudly', () => {
    expect(() => new TokenBucket(0, 1, () => 0)).toThrow('Expected `rate` to be a number above 0, got 0');
    expect(() => new TokenBucket(1, 0.5, () => 0)).toThrow('Expected `burst`');
    expect(defaultBurst(0.2)).toBe(1);
    expect(defaultBurst(40)).toBe(40);
  });
});
