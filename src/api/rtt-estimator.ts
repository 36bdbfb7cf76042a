/**
 * Round-trip times of the service's answers, as TCP measures them (RFC 6298): a smoothed mean
 * and mean deviation. `high` (mean + 2 deviations) is what a window must cover so that jitter
 * does not hold requests back. Rounds of samples also give a minimum per round, the signal
 * HyStart++ (RFC 9406) uses to see a queue building at the server before it refuses anything:
 * the mean moves with jitter, the minimum of a round only with a queue.
 */
export class RttEstimator {
  #srtt: number | undefined;
  #rttvar = 0;
  /** Lowest round minimum seen: the path's own latency, without a queue. */
  #baseMin = Number.POSITIVE_INFINITY;
  #roundMin = Number.POSITIVE_INFINITY;
  #roundSamples = 0;
  #roundStartedAt: number | undefined;
  #lastRoundMin: number | undefined;
  /** Rounds in a row whose minimum stood above the base by more than the threshold. */
  #raisedRounds = 0;
  /** The mean deviation when the base was last lowered: the path's own jitter, before any queue inflates it. */
  #baseRttvar = 0;

  /** Smoothed round-trip time in ms; undefined before the first sample. */
  get smoothed(): number | undefined {
    return this.#srtt;
  }

  /** Mean plus two deviations, in ms; undefined before the first sample. */
  get high(): number | undefined {
    return this.#srtt === undefined ? undefined : this.#srtt + 2 * this.#rttvar;
  }

  /** Minimum of the last complete round, in ms. */
  get lastRoundMin(): number | undefined {
    return this.#lastRoundMin;
  }

  get baseMin(): number | undefined {
    return Number.isFinite(this.#baseMin) ? this.#baseMin : undefined;
  }

  /**
   * Whether the minimum of the last two rounds stood above the base by more than HyStart++'s
   * threshold (an eighth of the base, between 4 and 16 ms) or, where the latency is noisier
   * than that, two mean deviations of the path without a queue: requests now wait in a queue
   * at the server.
   */
  get queueing(): boolean {
    return this.#raisedRounds >= 2;
  }

  #raised(roundMin: number): boolean {
    const base = this.baseMin;
    if (base === undefined) return false;
    return roundMin >= base + Math.max(Math.min(16, Math.max(4, base / 8)), 2 * this.#baseRttvar);
  }

  /**
   * Adds a sample taken `now`. A round closes once it holds 8 samples and spans one smoothed
   * round trip; returns true when it does.
   */
  add(sampleMs: number, now: number): boolean {
    const sample = Math.max(0, sampleMs);
    if (this.#srtt === undefined) {
      this.#srtt = sample;
      this.#rttvar = sample / 2;
    } else {
      this.#rttvar = 0.75 * this.#rttvar + 0.25 * Math.abs(this.#srtt - sample);
      this.#srtt = 0.875 * this.#srtt + 0.125 * sample;
    }
    this.#roundStartedAt ??= now;
    this.#roundMin = Math.min(this.#roundMin, sample);
    this.#roundSamples += 1;
    if (this.#roundSamples < 8 || now - this.#roundStartedAt < this.#srtt) return false;
    this.#lastRoundMin = this.#roundMin;
    this.#raisedRounds = this.#raised(this.#roundMin) ? this.#raisedRounds + 1 : 0;
    if (this.#roundMin <= this.#baseMin) {
      this.#baseMin = this.#roundMin;
      this.#baseRttvar = this.#rttvar;
    }
    this.#roundMin = Number.POSITIVE_INFINITY;
    this.#roundSamples = 0;
    this.#roundStartedAt = undefined;
    return true;
  }
}
