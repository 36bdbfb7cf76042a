import { issue27Families } from '../helpers/chaos-schedule.js';
import { describeSchedules } from '../helpers/chaos-suites.js';

/**
 * The fast subset of issue 27's faults, inside `npm test`: one schedule each (a paused writer,
 * Ctrl-C with a deep queue, a by-id 404, access tokens of one second, a rotating key on a
 * read-only folder), each of which fires. `npm run chaos` runs 100 (seeds 3000–3099).
 */
describeSchedules('amsync sync under the faults of issue 27 says only what is true (fast subset)', 'fast-issue-27', { concurrency: 2, timeoutMs: 240_000, everyFamilyFires: issue27Families });
