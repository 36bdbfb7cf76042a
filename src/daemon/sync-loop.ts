import { retryDelay, type BackoffOptions } from './backoff.js';
import type { Timers } from '../time/index.js';

/** What asked for a run. Several can share one run. `ctl`: `amsync ctl sync` or `resume`; `window`: a deny window ended; `expiry`: an item expires (or will in 24 h). */
export type TriggerReason = 'start' | 'file' | 'schedule' | 'reload' | 'retry' | 'leader' | 'ctl' | 'window' | 'expiry';

export interface RunVerdict {
  /** The run failed in a way a later attempt may fix: retry with backoff unless a trigger comes first. */
  readonly retry: boolean;
}

export interface SyncLoopOptions {
  /** One run. Should not throw; a throw counts as a run to retry. */
  run(reasons: readonly TriggerReason[]): Promise<RunVerdict>;
  readonly timers: Timers;
  readonly backoff: BackoffOptions;
  readonly random: () => number;
  onRetryScheduled?(delayMs: number, failures: number): void;
  onRunError?(error: unknown): void;
}

/**
 * Single flight with coalescing: never two runs at once, and any number of triggers that
 * arrive during a run become exactly one follow-up run (with every reason). A run that asks
 * for a retry is repeated after an exponential backoff, unless another trigger comes first:
 * any trigger is as good as the retry.
 */
export class SyncLoop {
  readonly #o: SyncLoopOptions;
  readonly #pending = new Set<TriggerReason>();
  #current: Promise<void> | undefined;
  #retryHandle: unknown;
  #failures = 0;
  #stopped = false;

  constructor(options: SyncLoopOptions) {
    this.#o = options;
  }

  get running(): boolean {
    return this.#current !== undefined;
  }

  /** Runs that asked for a retry in a row. */
  get failures(): number {
    return this.#failures;
  }

  get retryScheduled(): boolean {
    return this.#retryHandle !== undefined;
  }

  trigger(reason: TriggerReason): void {
    if (this.#stopped) return;
    this.#pending.add(reason);
    this.#clearRetry();
    if (this.#current === undefined) this.#start();
  }

  /** Resolves when no run is in progress (the current one and its follow-ups are done). */
  idle(): Promise<void> {
    return this.#current ?? Promise.resolve();
  }

  /** No more runs: pending triggers and a scheduled retry are dropped; the current run goes on. */
  stop(): Promise<void> {
    this.#stopped = true;
    this.#pending.clear();
    this.#clearRetry();
    return this.idle();
  }

  #start(): void {
    this.#current = this.#drain().finally(() => {
      this.#current = undefined;
      // A trigger that came in the last microtasks of the drain must not be lost.
      if (this.#pending.size > 0 && !this.#stopped) this.#start();
    });
  }

  async #drain(): Promise<void> {
    // Start on a later tick: the caller (a watcher callback, a signal handler) returns first,
    // and triggers fired in the same tick join this first run instead of a follow-up.
    await Promise.resolve();
    while (this.#pending.size > 0 && !this.#stopped) {
      const reasons = [...this.#pending];
      this.#pending.clear();
      this.#clearRetry();
      let verdict: RunVerdict;
      try {
        verdict = await this.#o.run(reasons);
      } catch (error) {
        this.#o.onRunError?.(error);
        verdict = { retry: true };
      }
      this.#failures = verdict.retry ? this.#failures + 1 : 0;
    }
    if (this.#failures > 0 && !this.#stopped && this.#pending.size === 0) this.#scheduleRetry();
  }

  #scheduleRetry(): void {
    const delay = retryDelay(this.#failures, this.#o.backoff, this.#o.random);
    this.#retryHandle = this.#o.timers.setTimeout(() => {
      this.#retryHandle = undefined;
      this.trigger('retry');
    }, delay);
    this.#o.onRetryScheduled?.(delay, this.#failures);
  }

  #clearRetry(): void {
    if (this.#retryHandle !== undefined) this.#o.timers.clearTimeout(this.#retryHandle);
    this.#retryHandle = undefined;
  }
}
