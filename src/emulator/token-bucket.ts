/**
 * The rate limit: a token bucket holding at most `burst` tokens, refilled at `rate` per
 * second. A request takes one token or is refused with the time until a token is back, which
 * becomes the Retry-After header. The clock is a parameter so tests step it by hand.
 */
export type Take = { ok: true } | { ok: false; retryAfterMs: number };

export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    readonly rate: number,
    readonly burst: number,
    private readonly nowMs: () => number,
  ) {
    if (!(rate > 0) || !Number.isFinite(rate)) throw new RangeError(`Expected \`rate\` to be a number above 0, got ${rate}`);
    if (!(burst >= 1) || !Number.isFinite(burst)) throw new RangeError(`Expected \`burst\` to be a number from 1 upwards, got ${burst}`);
    this.tokens = burst;
    this.last = nowMs();
  }

  take(): Take {
    const now = this.nowMs();
    // A clock that steps back (tests, NTP) must not drain the bucket.
    const elapsed = Math.max(0, now - this.last);
    this.last = now;
    this.tokens = Math.min(this.burst, this.tokens + (elapsed * this.rate) / 1000);
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterMs: ((1 - this.tokens) * 1000) / this.rate };
  }
}

/** The default capacity: one second's worth of requests, and at least one. */
export function defaultBurst(rate: number): number {
  return Math.max(1, rate);
}
