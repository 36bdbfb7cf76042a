import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const root = fileURLToPath(new URL('../..', import.meta.url));
/** The CLI's launcher: AMSYNC_BIN runs a build placed elsewhere (the chaos run's snapshot); by default the package's own. */
export const bin = process.env.AMSYNC_BIN ?? join(root, 'bin', 'amsync.js');
