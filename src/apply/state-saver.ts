import type { PasswordState } from '../secrets/index.js';

/**
 * Saves the state file while an apply runs, not only at its end: a run killed halfway keeps
 * the fingerprints of the passwords it did set. One save is written at a time: a save asked
 * for (`touch`, `saveNow`) while one is being written runs once that one has ended, and every
 * request made meanwhile shares it; it starts after them, so it holds their records. A write
 * of an older snapshot therefore never ends after a newer one (the file on disk holds every
 * record made before the start of the latest save that ended), and 1,000 creates cost a
 * handful of writes, not 1,000. A failed `touch` save does not stop the apply (its writes go to
 * the service, not the disk); the last failure is kept and `flush` reports it after a final
 * attempt. A failed `saveNow` throws.
 */
export class StateSaver {
  readonly #state: PasswordState;
  /** The save being written. */
  #inFlight: Promise<void> | undefined;
  /** The save that starts when the one in flight ends: asked for since that one began. */
  #next: Promise<void> | undefined;
  #error: unknown;

  constructor(state: PasswordState) {
    this.#state = state;
  }

  /** Something was recorded: save soon. Never throws. */
  touch(): void {
    this.#request().then(
      () => {
        this.#error = undefined;
      },
      (error: unknown) => {
        this.#error = error;
      },
    );
  }

  /** Saved now, after the save in flight: for a record that must be on disk before a request is sent. Throws when it could not be. */
  saveNow(): Promise<void> {
    return this.#request();
  }

  /** Waits for saves in flight, saves what is left, and returns the error if it failed. */
  async flush(): Promise<unknown> {
    for (let save = this.#next ?? this.#inFlight; save !== undefined; save = this.#next ?? this.#inFlight) await save.catch(() => undefined);
    if (this.#state.dirty) {
      try {
        await this.#request();
        this.#error = undefined;
      } catch (error) {
        this.#error = error;
      }
    }
    return this.#state.dirty ? this.#error : undefined;
  }

  /** A save that begins after this call (so it holds every record made before it), one at a time. */
  #request(): Promise<void> {
    // Not begun yet (it is cleared as it begins): it will hold this request's records.
    if (this.#next !== undefined) return this.#next;
    if (this.#inFlight === undefined) return this.#start();
    this.#next = this.#inFlight.catch(() => undefined).then(() => {
      this.#next = undefined;
      return this.#start();
    });
    return this.#next;
  }

  #start(): Promise<void> {
    const save = this.#state.save().finally(() => {
      if (this.#inFlight === save) this.#inFlight = undefined;
    });
    this.#inFlight = save;
    return save;
  }
}
