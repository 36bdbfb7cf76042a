import { dirname, join } from 'node:path';
import type { Settings } from '../settings/index.js';

/** The control socket: `daemon.socket` (`--socket`), else `ctl.sock` beside the state file (`.amsync/ctl.sock`). */
export function ctlSocketPath(settings: Pick<Settings, 'stateFile' | 'daemon'>): string {
  return settings.daemon.socket ?? join(dirname(settings.stateFile), 'ctl.sock');
}
