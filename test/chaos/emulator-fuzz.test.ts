import { describeFuzz } from './helpers/suites.js';

/** The fast subset of the fuzz, in the slow project (`npm run test:slow`); `npm run chaos` sends twenty times more. */
describeFuzz('the emulator under fuzz never fails and answers only the statuses of the spec', [1], 1000);
