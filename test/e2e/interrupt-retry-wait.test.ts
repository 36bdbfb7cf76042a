import { EventEmitter } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { emulatorPerTest } from '../helpers/emulator-per-test.js';
import { runInProcess, type InProcessRun } from '../helpers/in-process.js';

/**
 * Ctrl-C while a listing page waits out its backoff after a 503 (issue 27, deliverable 1,
 * review): the stop ends the wait, no retry is sent, and the run ends as an interrupt (130,
 * the interrupted line), not as a listing that failed (`unavailable`, "listing incomplete").
 */

const TOKEN = 'interrupt-retry-token';

let emu: RunningEmulator;
let dir: string;

emulatorPerTest(TOKEN, 'amsync-interrupt-retry-', (e, d) => {
  emu = e;
  dir = d;
});
beforeEach(async () => {
  await writeFile(join(dir, 'access.yaml'), 'sshUsers:\n  - username: alice\n    password: { env: PW }\n');
});

const env = () => ({ AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN, PW: 'pw-interrupt-retry-1', AMSYNC_STATE_KEY: 'k' });
const answered503 = () => emu.requests().filter((r) => r.method === 'GET' && r.status === 503);

/** argv in-process; SIGINT once the service's log shows the listing answered 503 (amsync then waits 30 s to retry). */
async function interruptedInBackoff(argv: string[]): Promise<InProcessRun> {
  emu.setFaults({ rules: [{ method: 'GET', path: '^/api/sshusers$', status: 503, retryAfter: 30 }] });
  const signals = new EventEmitter();
  let sent = false;
  const watch = setInterval(() => {
    if (sent || answered503().length === 0) return;
    sent = true;
    signals.emit('SIGINT', 'SIGINT');
  }, 5);
  try {
    return await runInProcess(argv, { cwd: dir, env: env(), signals });
  } finally {
    clearInterval(watch);
  }
}

describe('Ctrl-C while a listing waits to retry a 503', () => {
  it('sync: exits 130 with the interrupted line, sends no retry and no write, says no "listing incomplete"', async () => {
    const run = await interruptedInBackoff(['sync', '--auto-approve']);
    expect(run.code, run.stderr).toBe(130);
    expect(run.stderr).toContain('interrupted by SIGINT before any change was sent: nothing was written');
    expect(run.stderr).not.toContain('listing incomplete');
    // What the service received: the one listing answered 503, no retry of it, nothing written.
    expect(emu.requests().filter((r) => r.path === '/api/sshusers' && r.method === 'GET')).toHaveLength(1);
    expect(emu.requests().filter((r) => r.method !== 'GET')).toEqual([]);
  });
});

describe("Ctrl-C during a fleet sync while a target's listing waits to retry a 503", () => {
  it('that target is interrupted before any change was sent, not failed; the one never contacted is counted not started', async () => {
    const fleet = await startEmulator({ tokens: [TOKEN], tenants: ['one', 'two'] });
    try {
      const [one, two] = fleet.tenantNames.map((name) => fleet.tenant(name));
      one!.setFaults({ rules: [{ method: 'GET', path: '^/api/sshusers$', status: 503, retryAfter: 30 }] });
      two!.setFaults({ rules: [{ method: 'GET', path: '^/api/sshusers$', status: 503, retryAfter: 30 }] });
      await writeFile(join(dir, 'targets.yaml'), `targets:\n${[one!, two!].map((t) => `  - name: ${t.name}\n    url: ${t.url}\n    token: { env: FLEET_TOKEN }\n`).join('')}`);
      const signals = new EventEmitter();
      let sent = false;
      // With one target at a time, `one` waits out its 503 and `two` is not started yet.
      const watch = setInterval(() => {
        if (sent || !one!.requests().some((r) => r.method === 'GET' && r.status === 503)) return;
        sent = true;
        signals.emit('SIGINT', 'SIGINT');
      }, 5);
      const run = await runInProcess(['sync', '--targets', 'targets.yaml', '--target-concurrency', '1'], {
        cwd: dir,
        env: { FLEET_TOKEN: TOKEN, PW: 'pw-interrupt-retry-1', AMSYNC_STATE_KEY: 'k' },
        signals,
      }).finally(() => clearInterval(watch));
      expect(run.code, run.stderr).toBe(130);
      // What the services received: one listing answered 503 and not retried; nothing at all at `two`; no write.
      expect(one!.requests().filter((r) => r.method === 'GET' && r.path === '/api/sshusers')).toHaveLength(1);
      expect(two!.requests()).toEqual([]);
      expect([...one!.requests(), ...two!.requests()].filter((r) => r.method !== 'GET')).toEqual([]);
      const closing = run.stderr.split('\n').find((l) => l.includes('interrupted by SIGINT'));
      // `one` received a listing, so it is not said to be one that nothing was sent to: it is
      // interrupted, having written nothing; `two`, which received nothing, is the one not started.
      expect(closing, run.stderr).toContain('; 1 target was not started');
      expect(run.stdout).toContain(`== target one (${one!.url}) ==\ninterrupted before any change was sent: nothing was written\n`);
      expect(run.stdout).toContain('· 1 target not started: the run was interrupted');
      expect(`${run.stdout}\n${run.stderr}`).not.toMatch(/target one: failed|"status":"failed"|listing incomplete/);
    } finally {
      await fleet.close();
    }
  });
});
