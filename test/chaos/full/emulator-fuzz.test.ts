import { describeFuzz } from '../helpers/suites.js';

/** `npm run chaos`: 20,000 seeded random requests in four runs. */
describeFuzz('the emulator under fuzz never fails and answers only the statuses of the spec', [11, 12, 13, 14], 5000);
