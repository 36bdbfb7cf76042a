/**
 * The clock and timers the daemon runs on, injected so that debounce, backoff and the
 * shutdown grace can be tested in virtual time. Same shape as the client's Timers.
 */
export interface DaemonTimers {
  /** Monotonic milliseconds, for durations (they must not jump with the wall clock). */
  now(): number;
  /** Wall-clock epoch milliseconds, for timestamps shown to people and Prometheus. */
  wallNow(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemDaemonTimers: DaemonTimers = {
  now: () => performance.now(),
  wallNow: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};
