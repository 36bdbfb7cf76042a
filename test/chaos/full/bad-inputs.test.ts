import { badInputs } from '../helpers/bad-inputs.js';
import { describeBadInputs } from '../helpers/suites.js';

/** `npm run chaos`: the whole bad-input corpus, end to end through `run(argv, io)` in-process. */
describeBadInputs(`bad input gets a clear error and its exit code, and sends zero requests (all ${badInputs.length} cases)`);
