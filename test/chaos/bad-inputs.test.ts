import { badInputs } from './helpers/bad-inputs.js';
import { describeBadInputs } from './helpers/suites.js';

/**
 * The fast subset of the bad-input corpus, in the slow project (`npm run test:slow`): one or two of each kind (the
 * desired file, the settings file, flags, environment, the daemon's watch). `npm run chaos`
 * tries the whole corpus.
 */
const sample = new Set([
  'a YAML alias bomb (billion laughs)',
  'a binary desired file',
  'a desired file nested 5,000 deep in flow sequences',
  'a desired file saved as UTF-16',
  'a setting of the wrong type (concurrency: "x")',
  'a token on the command line (--token)',
  '--json with --format text (conflicting flags)',
  'AMSYNC_RATE=abc',
  'AMSYNC_TOKEN with white space inside',
  'AMSYNC_TOKENS_DIR names a file, not a directory',
  'the daemon with AMSYNC_DAEMON_SCHEDULE that is not cron',
  'the daemon watching a desired file that is a symlink loop',
]);

describeBadInputs('bad input gets a clear error and its exit code, and sends zero requests', badInputs.filter((c) => sample.has(c.name)));
