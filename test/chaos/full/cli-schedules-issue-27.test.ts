import { describeSchedules } from '../helpers/suites.js';
import { issue27Families } from '../helpers/schedule.js';

/** `npm run chaos`: 100 seeded CLI schedules of the faults of issue 27 (seeds 3000–3099), every one of them firing. */
describeSchedules('amsync sync under the faults of issue 27 says only what is true (seeds 3000–3099)', 'full-issue-27', { concurrency: 2, timeoutMs: 1_800_000, everyFamilyFires: issue27Families });
