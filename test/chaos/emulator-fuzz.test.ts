import { describeFuzz } from '../helpers/chaos-suites.js';

/** The fast subset of the fuzz, inside `npm test`; `npm run chaos` sends twenty times more. */
describeFuzz('the emulator under fuzz never fails and answers only the statuses of the spec', [1], 1000);
