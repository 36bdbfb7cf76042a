import { describeSchedules } from './helpers/suites.js';

/**
 * The fast subset of the chaos run, in the slow project (`npm run test:slow`): ten seeded fault schedules in which all
 * twenty fault families fire, against the built CLI. `npm run chaos` runs 400 more (300 of those
 * families, 100 of the faults of issue 27).
 */
describeSchedules('amsync sync under seeded faults keeps the promises of DESIGN.md §8', 'fast-cli', { concurrency: 2, timeoutMs: 240_000, everyFamilyFires: true });
