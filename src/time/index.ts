export { Sleeper, systemTimers, type Timers } from './timers.js';
