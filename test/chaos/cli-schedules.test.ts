import { describeSchedules } from '../helpers/chaos-suites.js';

/**
 * The fast subset of the chaos run, inside `npm test`: six seeded fault schedules in which all
 * thirteen fault families fire, against the built CLI. `npm run chaos` runs 210 more.
 */
describeSchedules('amsync sync under seeded faults keeps the promises of DESIGN.md §8', 'fast-cli', { concurrency: 2, timeoutMs: 240_000 });
