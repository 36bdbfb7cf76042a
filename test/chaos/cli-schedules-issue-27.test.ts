import type { FaultFamily } from './helpers/schedule.js';
import { describeSchedules } from './helpers/suites.js';

/**
 * The fast subset of issue 27's faults, in the slow project (`npm run test:slow`): one schedule each of a by-id 404,
 * access tokens of one second and a rotating key on a read-only folder, each of which fires.
 * The paused writer (a 12 s pause) and Ctrl-C with a deep queue (5-10 requests/s) are slow by
 * nature and took 26 of this file's 42 s: `npm test` covers them in process
 * (test/e2e/one-writer.test.ts, test/e2e/interrupt-queue.test.ts), and `npm run chaos`, which
 * .ci/run runs after it, plays 100 schedules of all five (seeds 3000-3099). The by-id 404 is
 * seed 3006, not 3001: 3001 also loses an apikey create's answer, and the run then looks for it
 * again for up to 30 s at the default timeout (late-create.ts), the whole of its 31 s.
 */
const fastFamilies: readonly FaultFamily[] = ['by-id-404', 'short-tokens', 'rotating-key-read-only'];

describeSchedules('amsync sync under the faults of issue 27 says only what is true (fast subset)', 'fast-issue-27', { concurrency: 2, timeoutMs: 240_000, everyFamilyFires: fastFamilies });
