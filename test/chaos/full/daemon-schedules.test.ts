import { describeSchedules } from '../helpers/suites.js';

/** `npm run chaos`: the sidecar under twenty seeded schedules, one per fault family. */
describeSchedules('amsync daemon under seeded faults keeps the promises of DESIGN.md §8', 'full-daemon', { daemon: true, concurrency: 2, timeoutMs: 900_000 });
