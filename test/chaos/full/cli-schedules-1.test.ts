import { describeSchedules } from '../helpers/suites.js';

/** `npm run chaos`: the first 150 of 300 seeded CLI schedules (the other file runs the rest). */
describeSchedules('amsync sync under seeded faults keeps the promises of DESIGN.md §8 (seeds 1000–1149)', 'full-cli-1', { concurrency: 2, timeoutMs: 1_800_000 });
