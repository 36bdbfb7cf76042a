import { RttEstimator } from './rtt-estimator.js';

/** When and at what rate a request was let through the limiter. */
export interface DispatchStamp {
  /** Monotonic ms. */
  readonly at: number;
  /** The limiter's rate at that moment. */
  readonly rate: number;
  /**
   * The request had to wait for its slot: the rate, not the caller, was what held it back.
   * Only such successes raise the rate; otherwise an idle client would drift upwards forever.
   */
  readonly paced: boolean;
  /**
   * How many times the limiter had held its requests back (a decrease, a Retry-After) when this
   * one was let through: one let through before the latest hold and not yet sent is held back
   * too (AdaptiveLimiter.heldBack). Absent on stamps not made by an AdaptiveLimiter.
   */
  readonly holds?: number;
}

export interface RateControllerOptions {
  /** Requests per second to start at when no ceiling is known. @default 10 */
  readonly initialRate?: number;
  /** The server's known limit (`--rate`): never exceeded, and the rate to start at. */
  readonly ceiling?: number;
  /** @default 0.5 */
  readonly minRate?: number;
  /** Upper bound when no ceiling is given. @default 1000 */
  readonly maxRate?: number;
  /** Multiplicative decrease on 503/429. @default 0.7, or 0.85 with a ceiling (503s at a known limit are jitter, not overload) */
  readonly decreaseFactor?: number;
}

// Slow start adds 1.25 ln 2 per paced success: at full demand that doubles the rate every 0.8 s.
// The server's burst hides its limit, so the rate at which its bucket runs dry is set by this
// growth: at a doubling every half second it was ~3 x R, and every request sent in the moment
// before the first 503 is handled (longer on a busy machine) met an empty bucket: 18-32 503s in
// one run of several (docs/performance.md, turn 7). Slower costs seconds at a low rate at a
// high latency (measured in test/bench/limiter-simulation.ts).
const slowStartStep = 1.25 * Math.LN2;
/**
 * While no limit is known, a call that finds nothing queued goes out at once when fewer than
 * this many are in flight (AdaptiveLimiter): a listing's serial pages run as fast as a plain
 * script's, and only calls that queue up (an apply's writes) are paced and ramp up. Slow start
 * begins from up to this many per round trip, at most twice the rate the client was seen to
 * use, so a high latency does not mean seconds at a crawl.
 */
export const unpacedWindow = 4;
// The cut at a 503 without a Retry-After while the limit is only guessed, after slow start
// raised the rate (see onThrottle).
const slowStartExitFactor = 0.5;
// A measured limit within this share of the last one is the same limit (see onThrottle) ...
const steadyLimitShare = 0.05;
// ... and the probe above it waits from this long, doubling each time, up to the last.
const firstProbeHoldMs = 4000;
const maxProbeHoldMs = 60_000;
// After such a cut the rate climbs back towards the guessed limit with this time constant,
// and at least by this fraction per second (dr/dt >= 0.15 r): steadier than the recovery to a
// measured limit below.
const guessedRecoverySeconds = 2;
const guessedClimb = 0.15;
// After a throttle the rate climbs back towards the limit estimate with this time constant.
const recoverySeconds = 0.5;
// Above the estimate it probes upwards by this fraction of the estimate per second ...
const probeFraction = 0.02;
// ... faster the longer no throttle came (so a raised server limit is found), CUBIC-like.
const probeAccelerationSeconds = 10;
// The rate that drew a 503 is above the server's limit; the estimate is set a little below it.
const limitMargin = 0.03;
// Between two throttles a token-bucket server is empty at both ends, so the successes in
// between, over the time, measure its refill rate: its real limit. A bucket that refilled
// during a Retry-After pause makes the throttled rate itself a poor guide (it overshoots).
// Used only over a long enough span in which the limiter, not the caller, was the bottleneck.
const goodputMinSpanMs = 1000;
const goodputMinPacedShare = 0.8;
// Growth is capped at twice the rate actually achieved over the last second (after RFC 7661,
// congestion window validation): when concurrency, latency or the caller holds the pace down,
// a rate the client never uses says nothing about the server, and would later be spent at once.
const usedRateWindowMs = 1000;
const usedRateMinSpanMs = 250;

function positive(name: string, value: number | undefined): void {
  if (value !== undefined && !(Number.isFinite(value) && value > 0)) {
    throw new RangeError(`Expected \`${name}\` to be a number above 0, got ${String(value)}`);
  }
}

/**
 * The adaptive part of the limiter, as a small state machine without timers (the caller
 * passes `now`). Until the first sign of the server's limit it starts from the rate the client
 * is seen to use and doubles every 0.8 s (slow start). The first sign is a queue
 * building at the server (the minimum round-trip time of a round rising, HyStart++: the
 * estimate is then what the server serves, and the rate holds there), or a 503/429: the rate
 * is cut and the estimate set a little below the rate that drew it, or at the next one to the
 * goodput between the two (a token bucket empty at both ends lets exactly its limit through,
 * whatever burst hid it at first). After a throttle the rate climbs quickly back to the
 * estimate and probes above it slowly, faster the longer the server stays quiet, and not at
 * all while a queue builds.
 *
 * With a ceiling (the server's known limit) it starts at the ceiling, never exceeds it, cuts
 * more gently, and climbs back to it.
 *
 * Tuned in virtual time against token-bucket and queueing servers
 * (test/bench/limiter-simulation.ts); the real figures are in docs/performance.md.
 */
export class RateController {
  readonly ceiling: number | undefined;
  readonly minRate: number;
  readonly maxRate: number;
  readonly #decreaseFactor: number;
  #rate: number;
  /** Estimate of the server's limit; undefined until the first throttle (slow start). */
  #limit: number | undefined;
  #lastDecreaseAt = Number.NEGATIVE_INFINITY;
  #reachedLimitAt: number | undefined;
  #successes = 0;
  #pacedSuccesses = 0;
  /** Times of the successes in the last `usedRateWindowMs`, oldest first, from `#recentHead`. */
  readonly #recent: number[] = [];
  #recentHead = 0;
  #firstSuccessAt: number | undefined;
  readonly #rtt = new RttEstimator();
  #throttled = false;
  /** Slow start has raised the rate (on successes: a server's burst may have paid for them). */
  #grewInSlowStart = false;
  /**
   * The estimate was measured (the goodput between two throttles, what a queueing server
   * serves, or the ceiling), not only guessed from the rate that drew a 503.
   */
  #measured = false;
  /** The last cut halved the rate below a guessed limit: the climb back is steady (see onSuccess). */
  #halved = false;
  /** How long the rate holds at a measured limit before it probes above it (see onThrottle). */
  #probeHoldMs = 0;

  constructor(options: RateControllerOptions = {}) {
    positive('initialRate', options.initialRate);
    positive('rate', options.ceiling);
    positive('minRate', options.minRate);
    positive('maxRate', options.maxRate);
    const factor = options.decreaseFactor;
    if (factor !== undefined && !(factor > 0 && factor < 1)) {
      throw new RangeError(`Expected \`decreaseFactor\` to be a number between 0 and 1, got ${String(factor)}`);
    }
    this.ceiling = options.ceiling;
    this.maxRate = options.ceiling ?? options.maxRate ?? 1000;
    this.minRate = Math.min(options.minRate ?? 0.5, this.maxRate);
    this.#decreaseFactor = factor ?? (options.ceiling === undefined ? 0.7 : 0.85);
    this.#limit = options.ceiling;
    this.#measured = options.ceiling !== undefined;
    this.#rate = this.#clamp(options.ceiling ?? options.initialRate ?? 10);
  }

  /** Current target in requests per second. */
  get rate(): number {
    return this.#rate;
  }

  /** Current estimate of the server's limit, once one is known. */
  get limitEstimate(): number | undefined {
    return this.#limit;
  }

  /**
   * Until the first sign of the server's limit (never with a ceiling): calls that do not queue
   * up may then go out unpaced (see AdaptiveLimiter).
   */
  get discovering(): boolean {
    return this.#limit === undefined && !this.#throttled;
  }

  /** Round-trip times of the successes. */
  get rtt(): RttEstimator {
    return this.#rtt;
  }

  /**
   * `clientBusy`: the client's own event loop is saturated (see loop-load.ts); slow start then
   * does not grow the rate (recovery and probing, with a limit known, are not held).
   */
  onSuccess(stamp: DispatchStamp, now: number, clientBusy = false): void {
    this.#successes += 1;
    if (stamp.paced) this.#pacedSuccesses += 1;
    const usedRate = this.#recordUse(now);
    const roundClosed = this.#rtt.add(now - stamp.at, now);
    // Sent before the last decrease: it says nothing about the rate since.
    const stale = stamp.at <= this.#lastDecreaseAt;
    if (this.#limit === undefined) {
      if (roundClosed && this.#rtt.queueing && Number.isFinite(usedRate)) {
        // A queue builds at the server: its limit is what it now serves (over the last quarter
        // second, in which the queue kept it busy). Hold there.
        const served = this.#rateOver(now, 250);
        this.#limit = this.#clamp(Math.max(usedRate, served));
        this.#measured = true;
        this.#rate = Math.min(this.#rate, this.#limit);
        this.#reachedLimitAt = now;
        return;
      }
      // Start from what the client is seen to use (a listing sent unpaced), not from a guess;
      // from an unpaced call, from the unpaced window's rate at the measured round trip too.
      const window = stamp.paced || stale ? 0 : this.#windowRate(usedRate);
      if (Number.isFinite(usedRate)) this.#rate = this.#clamp(Math.max(this.#rate, usedRate, window));
    }
    if (!stamp.paced || stale) return;
    // While a queue builds the rate holds: more would only lengthen it.
    if (this.#rtt.queueing) return;
    const rate = this.#rate;
    const limit = this.#limit;
    // Nor does slow start grow while the client's own loop is saturated: the client, not the
    // rate, holds the pace down (RFC 7661), and a rate it cannot send would be spent at once
    // when the server's burst runs out. Only in slow start: once a limit is known the rate
    // climbs back to it whatever else the process does.
    if (limit === undefined && clientBusy) return;
    let step: number;
    if (limit === undefined) {
      step = slowStartStep;
      this.#grewInSlowStart = true;
    } else if (rate < limit && this.#halved) {
      // Below a limit only guessed from the rate that drew the 503 (up to 3 x the real one when
      // a burst hid it): a steady climb, not a leap back to it. The server's bucket refills
      // while the rate is below its limit, so the climb crosses it gently, the next 503 comes
      // alone, and the successes between the two measure the limit.
      step = Math.max(guessedClimb, (limit - rate) / (guessedRecoverySeconds * rate));
    } else if (rate < limit) {
      // dr/dt = (limit - rate) / recovery, spread over the `rate` successes of each second.
      step = Math.max((limit - rate) / (recoverySeconds * rate), (probeFraction * limit) / rate);
    } else {
      const quietMs = this.#reachedLimitAt === undefined ? 0 : now - this.#reachedLimitAt;
      if (quietMs < this.#probeHoldMs) return;
      const quiet = (quietMs - this.#probeHoldMs) / 1000;
      step = (probeFraction * limit * (1 + quiet / probeAccelerationSeconds)) / rate;
    }
    this.#rate = this.#clamp(Math.min(rate + step, Math.max(rate, 2 * usedRate)));
    if (limit !== undefined && this.#rate >= limit && this.#reachedLimitAt === undefined) {
      this.#reachedLimitAt = now;
    }
  }

  /**
   * A 503 or 429. Returns whether the rate was lowered: only the first throttle of a request
   * sent after the last decrease counts, so one overload is not punished once per request
   * that was already in flight.
   */
  onThrottle(stamp: DispatchStamp, now: number, retryAfterMs = 0): boolean {
    if (stamp.at <= this.#lastDecreaseAt) return false;
    const used = this.#recentRate(now);
    this.#throttled = true;
    // The rate the request went out at; unpaced requests go out faster than the target. Not
    // what a paced one's successes of the last second show: those were paid by the burst the
    // server just ran out of (it held the cut at ~2 x R for a second: 13 503s, no Retry-After).
    const paced = Math.min(stamp.rate, this.#rate);
    const offending = stamp.paced ? paced : Math.max(paced, used);
    // Slow start doubled the rate every 0.8 s on successes the server's burst paid for: the
    // rate that ran the burst dry is up to 3 x the limit, and says only that the limit is below
    // it. Until the limit is measured (the goodput between two 503s) a 503 without a
    // Retry-After halves the rate, as TCP does at the end of its slow start: the server's
    // bucket is empty, and every request sent above its limit draws another 503 (13 in a row
    // at R = 50 with the gentler cut). With a Retry-After the server said when to come back
    // and its bucket refills meanwhile: the gentler cut spends that refill instead of wasting it.
    const halve = this.#grewInSlowStart && !this.#measured && retryAfterMs <= 0;
    if (this.#limit === undefined && used === 0 && !stamp.paced) {
      // An unpaced call refused before a rate could be measured (a few at once at the start,
      // against a small bucket): it says nothing about the limit. Slow down and keep looking.
      this.#rate = this.#clamp(offending * (halve ? slowStartExitFactor : this.#decreaseFactor));
      this.#lastDecreaseAt = now;
      return true;
    }
    let estimate = offending * (1 - limitMargin);
    let measured = false;
    const span = now - this.#lastDecreaseAt;
    if (Number.isFinite(span) && span >= goodputMinSpanMs && this.#pacedSuccesses >= goodputMinPacedShare * this.#successes) {
      // Floored at the multiplicative decrease: with a small bucket, the Retry-After pause in
      // the span wastes refills, and the goodput then understates the limit.
      // While halving, the floor is the halved rate, and a goodput below it (a span that began
      // in slow start, not with an empty bucket) measures nothing: the estimate stays the guess.
      const goodput = (this.#successes * 1000) / span;
      const floor = offending * (halve ? slowStartExitFactor : this.#decreaseFactor);
      measured = goodput >= floor;
      if (measured || !halve) estimate = Math.min(estimate, Math.max(goodput, floor));
    }
    const factor = halve && !measured ? slowStartExitFactor : this.#decreaseFactor;
    this.#halved = factor === slowStartExitFactor;
    estimate = Math.max(this.minRate, estimate);
    // Each probe past a token bucket's limit costs a 503, so the rate holds at a measured
    // limit a while before it probes above it; twice as long each time the limit measured is
    // where the last one was (within a few percent: the server's limit has not moved), up to a
    // minute. A guessed limit is not held at.
    const steady = measured && this.#measured && this.#limit !== undefined && Math.abs(estimate - this.#limit) <= steadyLimitShare * this.#limit;
    this.#probeHoldMs = !measured ? 0 : steady ? Math.min(maxProbeHoldMs, 2 * Math.max(firstProbeHoldMs, this.#probeHoldMs)) : firstProbeHoldMs;
    if (measured) this.#measured = true;
    this.#successes = 0;
    this.#pacedSuccesses = 0;
    this.#limit = this.ceiling === undefined ? estimate : Math.min(this.ceiling, estimate);
    this.#rate = this.#clamp(Math.min(offending * factor, this.#limit));
    this.#lastDecreaseAt = now;
    this.#reachedLimitAt = undefined;
    return true;
  }

  /** Records a success; returns the rate achieved recently (Infinity while too early to tell). */
  #recordUse(now: number): number {
    this.#firstSuccessAt ??= now;
    this.#recent.push(now);
    return this.#usedRate(now);
  }

  /** Successes per second over the last `usedRateWindowMs` (Infinity while too early to tell). */
  #usedRate(now: number): number {
    if (this.#firstSuccessAt === undefined) return Number.POSITIVE_INFINITY;
    while (this.#recentHead < this.#recent.length && (this.#recent[this.#recentHead] as number) <= now - usedRateWindowMs) this.#recentHead += 1;
    if (this.#recentHead > 1024) {
      this.#recent.splice(0, this.#recentHead);
      this.#recentHead = 0;
    }
    const span = Math.min(usedRateWindowMs, now - this.#firstSuccessAt);
    if (span < usedRateMinSpanMs) return Number.POSITIVE_INFINITY;
    return ((this.#recent.length - this.#recentHead) * 1000) / span;
  }

  /** Successes per second over the last `windowMs` (at most `usedRateWindowMs`). */
  #rateOver(now: number, windowMs: number): number {
    let count = 0;
    for (let i = this.#recent.length - 1; i >= this.#recentHead && (this.#recent[i] as number) > now - windowMs; i -= 1) count += 1;
    return (count * 1000) / windowMs;
  }

  /** Successes per second lately, as soon as there are a few (unlike #usedRate, which waits for a longer span); 0 before. */
  #recentRate(now: number): number {
    const used = this.#usedRate(now);
    if (Number.isFinite(used)) return used;
    const count = this.#recent.length - this.#recentHead;
    const span = now - (this.#firstSuccessAt ?? now);
    return count >= 8 && span > 0 ? (count * 1000) / span : 0;
  }

  /** `unpacedWindow` requests per smoothed round trip, at most twice `usedRate`; 0 before a round trip is measured. */
  #windowRate(usedRate: number): number {
    const srtt = this.#rtt.smoothed;
    return srtt === undefined || srtt <= 0 ? 0 : Math.min(2 * usedRate, (unpacedWindow * 1000) / srtt);
  }

  #clamp(rate: number): number {
    return Math.min(this.maxRate, Math.max(this.minRate, rate));
  }
}
