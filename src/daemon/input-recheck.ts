import type { Timers } from '../time/index.js';

export interface InputRecheckOptions {
  readonly timers: Timers;
  /** How long after a run (or a failed probe) the input is loaded again. */
  readonly intervalMs: number;
  /** Whether the input loaded at the last attempt. */
  isValid(): boolean;
  /** Loads the input (offline); true when it loads. */
  probe(): Promise<boolean>;
  /** The input loads again: ask for a run. */
  onValid(): void;
  stopping(): boolean;
}

/**
 * While the input is invalid, looks again now and then; a good load triggers a run. A fix the
 * file watch missed is then picked up before the next scheduled run.
 */
export class InputRecheck {
  readonly #o: InputRecheckOptions;
  #handle: unknown;

  constructor(options: InputRecheckOptions) {
    this.#o = options;
  }

  /** After a run: waits for the next look while the input is invalid, else cancels it. */
  arm(): void {
    this.cancel();
    if (this.#o.stopping() || this.#o.isValid()) return;
    this.#handle = this.#o.timers.setTimeout(() => {
      this.#handle = undefined;
      void this.#o.probe().then((ok) => {
        if (this.#o.stopping()) return;
        if (ok) this.#o.onValid();
        else this.arm();
      });
    }, this.#o.intervalMs);
  }

  cancel(): void {
    if (this.#handle !== undefined) this.#o.timers.clearTimeout(this.#handle);
    this.#handle = undefined;
  }
}
