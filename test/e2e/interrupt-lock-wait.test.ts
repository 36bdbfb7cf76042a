import { EventEmitter } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { acquireWriterLock, writerLockPath } from '../../src/apply/index.js';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { emulatorPerTest } from '../helpers/emulator-per-test.js';
import { runInProcess } from '../helpers/in-process.js';

/**
 * Ctrl-C while `--lock-timeout` waits for another writer (issue 27, deliverable 1, review): the
 * wait ends at once, exit 130 with one line saying so; nothing reaches the service.
 */

const TOKEN = 'interrupt-lock-token';

let emu: RunningEmulator;
let dir: string;

emulatorPerTest(TOKEN, 'amsync-interrupt-lock-', (e, d) => {
  emu = e;
  dir = d;
});
beforeEach(async () => {
  await writeFile(join(dir, 'access.yaml'), 'sshUsers:\n  - username: alice\n    password: { env: PW }\n');
});

const env = () => ({ AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN, PW: 'pw-interrupt-lock-1', AMSYNC_STATE_KEY: 'k' });

describe('Ctrl-C while waiting for the writer lock', () => {
  it.each([
    ['sync', '--auto-approve'],
    ['apply', 'plan.json'],
  ])('%s: exits 130 at once, "interrupted while waiting for the writer lock", nothing sent', async (...argv) => {
    if (argv[0] === 'apply') {
      const planned = await runInProcess(['plan', '--out', 'plan.json'], { cwd: dir, env: env() });
      expect(planned.code, planned.stderr).toBe(0);
      emu.clearRequests();
    }
    // Another writer, alive (this very process), holds the lock for the whole test.
    const holder = await acquireWriterLock(writerLockPath(join(dir, '.amsync', 'state.json')), { timeoutMs: 0 });
    try {
      const signals = new EventEmitter();
      // Once the run listens for Ctrl-C it is waiting for the lock (or about to): the lock comes before any request.
      const watch = setInterval(() => {
        if (signals.listenerCount('SIGINT') === 0) return;
        clearInterval(watch);
        signals.emit('SIGINT', 'SIGINT');
      }, 5);
      // 10 minutes: the run must not wait it out.
      const run = await runInProcess([...argv, '--lock-timeout', '600000'], { cwd: dir, env: env(), signals }).finally(() => clearInterval(watch));
      expect(run.code, run.stderr).toBe(130);
      expect(run.stderr).toMatch(/interrupted by SIGINT while waiting for the writer lock .*state\.json\.lock .*; nothing was sent/);
      expect(run.stderr).not.toContain('another amsync run is writing');
      expect(emu.requests()).toEqual([]);
    } finally {
      await holder.release();
    }
  });
});
