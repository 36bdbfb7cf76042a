import { describeSchedules } from '../helpers/suites.js';

/** `npm run chaos`: the second 150 of 300 seeded CLI schedules. */
describeSchedules('amsync sync under seeded faults keeps the promises of DESIGN.md §8 (seeds 1150–1299)', 'full-cli-2', { concurrency: 2, timeoutMs: 1_800_000 });
