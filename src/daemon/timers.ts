import { systemTimers, type Timers } from '../api/timers.js';

/**
 * The daemon runs on the same injectable clock as the client (monotonic `now` for debounce,
 * backoff and the shutdown grace; `wallNow` for timestamps), so one fake drives both in tests.
 */
export type DaemonTimers = Timers;

export const systemDaemonTimers: DaemonTimers = systemTimers;
