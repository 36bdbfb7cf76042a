export { Sleeper, systemTimers, type Timers } from './timers.js';
export { onAbort } from './on-abort.js';
