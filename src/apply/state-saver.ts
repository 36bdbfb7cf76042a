import type { PasswordState } from '../secrets/index.js';

/**
 * Saves the state file while an apply runs, not only at its end: a run killed halfway keeps
 * the fingerprints of the passwords it did set. Saves are coalesced (one in flight, one
 * more if anything was recorded meanwhile), so 1,000 creates cost a handful of writes, not
 * 1,000. A failed save does not stop the apply (its writes go to the service, not the disk);
 * the last failure is kept and `flush` reports it after a final attempt.
 */
export class StateSaver {
  readonly #state: PasswordState;
  #inFlight: Promise<void> | undefined;
  #again = false;
  #error: unknown;
  #now: Promise<void> = Promise.resolve();

  constructor(state: PasswordState) {
    this.#state = state;
  }

  /** Something was recorded: save soon. Never throws. */
  touch(): void {
    if (this.#inFlight) {
      this.#again = true;
      return;
    }
    this.#inFlight = this.#loop().finally(() => {
      this.#inFlight = undefined;
    });
  }

  /** Saved now, after the saves in flight: for a record that must be on disk before a request is sent. Throws when it could not be. */
  saveNow(): Promise<void> {
    // One at a time: a save begun before another's record was made must not land after it.
    const run = this.#now.then(async () => {
      while (this.#inFlight) await this.#inFlight;
      await this.#state.save();
    });
    this.#now = run.catch(() => undefined);
    return run;
  }

  /** Waits for saves in flight, saves what is left, and returns the error if it failed. */
  async flush(): Promise<unknown> {
    while (this.#inFlight) await this.#inFlight;
    if (this.#state.dirty) await this.#saveOnce();
    return this.#state.dirty ? this.#error : undefined;
  }

  async #loop(): Promise<void> {
    do {
      this.#again = false;
      await this.#saveOnce();
    } while (this.#again);
  }

  async #saveOnce(): Promise<void> {
    try {
      await this.#state.save();
      this.#error = undefined;
    } catch (error) {
      this.#error = error;
    }
  }
}
