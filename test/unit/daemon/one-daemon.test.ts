import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { root } from '../../helpers/paths.js';

/**
 * Issue 28, deliverable 3: one daemon. A single service is a fleet of one target: one Daemon
 * (daemon/daemon.ts) holds the lifecycle, the reload and the schedule; one TargetRunner per
 * target holds a reconciler. A second daemon built beside it (its own lifecycle, reconciler or
 * schedule replacement), a fleet-* file back in daemon/, or the wiring growing back in cli/
 * fails here.
 */

const daemonDir = join(root, 'src', 'daemon');
const sources = readdirSync(daemonDir)
  .filter((f) => f.endsWith('.ts'))
  .map((f) => ({ file: f, text: readFileSync(join(daemonDir, f), 'utf8') }));

/** The files of src/daemon/ whose code contains `needle`. */
function filesWith(needle: string): string[] {
  return sources.filter((s) => s.text.includes(needle)).map((s) => s.file);
}

function lines(path: string): number {
  try {
    return readFileSync(join(root, path), 'utf8').split('\n').length - 1;
  } catch {
    return 0;
  }
}

describe('one daemon for one service and for a fleet', () => {
  it('one file makes the lifecycle, and one the reconcilers (a runner per target)', () => {
    expect(filesWith('new DaemonLifecycle(')).toEqual(['daemon.ts']);
    expect(filesWith('new Reconciler(')).toEqual(['target-runner.ts']);
  });

  it('one reload and schedule path: the schedule is replaced from daemon.ts alone', () => {
    expect(filesWith('.replaceSchedule(')).toEqual(['daemon.ts']);
    expect(filesWith('#applyRuntime(')).toEqual(['daemon.ts']);
  });

  it('no fleet-* file in daemon/: the fleet itself is src/fleet/', () => {
    expect(sources.map((s) => s.file).filter((f) => f.startsWith('fleet-'))).toEqual([]);
  });

  it("cli/ only parses the daemon's flags and maps its stop to an exit code (≤ 350 lines)", () => {
    const wiring = ['src/cli/daemon.ts', 'src/cli/fleet-daemon.ts', 'src/cli/daemon-helpers.ts', 'src/cli/fleet-options.ts'].map(lines);
    expect(wiring.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(350);
  });
});
