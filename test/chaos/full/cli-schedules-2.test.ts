import { describeSchedules } from '../../helpers/chaos-suites.js';

/** `npm run chaos`: the second 105 of 210 seeded CLI schedules. */
describeSchedules('amsync sync under seeded faults keeps the promises of DESIGN.md §8 (seeds 1105–1209)', 'full-cli-2', { concurrency: 2, timeoutMs: 1_200_000 });
