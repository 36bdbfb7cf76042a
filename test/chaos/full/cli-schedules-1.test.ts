import { describeSchedules } from '../../helpers/chaos-suites.js';

/** `npm run chaos`: the first 105 of 210 seeded CLI schedules (the other file runs the rest). */
describeSchedules('amsync sync under seeded faults keeps the promises of DESIGN.md §8 (seeds 1000–1104)', 'full-cli-1', { concurrency: 2, timeoutMs: 1_200_000 });
