import { describeSchedules } from './helpers/suites.js';

/** The fast subset for the sidecar: one schedule, a CLI sync beside it, echoed secrets, resets. */
describeSchedules('amsync daemon under seeded faults keeps the promises of DESIGN.md §8', 'fast-daemon', { daemon: true, concurrency: 1, timeoutMs: 120_000 });
