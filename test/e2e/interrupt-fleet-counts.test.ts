import { EventEmitter } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningTenants } from '../../src/emulator/index.js';
import { runInProcess } from '../helpers/in-process.js';

/**
 * Issue 31 item 5: Ctrl-C during a fleet sync prints the targets it kept from starting as one
 * count, not a section each — and the count is true: those targets' services received nothing.
 */

const TOKEN = 'interrupt-fleet-counts-token';
const NAMES = ['t1', 't2', 't3', 't4', 't5', 't6'];
const USERS = 20;
let fleet: RunningTenants;
let dir: string;

beforeAll(async () => {
  // Slow writes, one target at a time: the signal lands in the second target's apply.
  fleet = await startEmulator({ tokens: [TOKEN], tenants: NAMES, latencyMs: 60 });
  dir = await mkdtemp(join(tmpdir(), 'amsync-interrupt-fleet-'));
  const users = Array.from({ length: USERS }, (_, i) => `  - username: user-${String(i).padStart(3, '0')}\n    password: { env: PW }\n`).join('');
  await writeFile(join(dir, 'access.yaml'), `sshUsers:\n${users}`);
  await writeFile(join(dir, 'targets.yaml'), `targets:\n${NAMES.map((n) => `  - name: ${n}\n    url: ${fleet.tenant(n).url}\n    token: { env: FLEET_TOKEN }\n`).join('')}`);
});
afterAll(async () => {
  await fleet.close();
  await rm(dir, { recursive: true, force: true });
});

describe('Ctrl-C during a fleet sync: the targets not started are counted in one line', () => {
  it('one line for the targets not started (no section each); the count matches the services that received nothing', async () => {
    const tenants = NAMES.map((n) => fleet.tenant(n));
    const created = () => tenants.reduce((n, t) => n + t.state().sshUsers.length, 0);
    const signals = new EventEmitter();
    let sent = false;
    const watch = setInterval(() => {
      if (sent || created() < USERS + 3) return;
      sent = true;
      signals.emit('SIGINT', 'SIGINT');
    }, 5);
    const run = await runInProcess(['sync', '--targets', 'targets.yaml', '--auto-approve', '--target-concurrency', '1'], {
      cwd: dir,
      tty: true,
      env: { FLEET_TOKEN: TOKEN, PW: 'pw-interrupt-fleet-1', AMSYNC_STATE_KEY: 'k' },
      signals,
    }).finally(() => clearInterval(watch));
    expect(run.code, run.stderr).toBe(130);
    // The services that received no request at all: the targets the interrupt kept from starting.
    const untouched = tenants.filter((t) => t.requests().length === 0).map((t) => t.name);
    expect(untouched.length).toBeGreaterThan(0);
    const lines = run.stdout.split('\n');
    expect(lines.filter((l) => l.includes('the run was interrupted'))).toEqual([`· ${untouched.length} targets not started: the run was interrupted`]);
    for (const name of untouched) expect(run.stdout).not.toContain(`== target ${name} `);
    // The closing line says the same.
    const closing = run.stderr.split('\n').find((l) => l.includes('interrupted by SIGINT'));
    expect(closing, run.stderr).toContain(`; ${untouched.length} targets were not started`);
    // What it reports applied is what the services created.
    const m = /(\d+) applied, (\d+) failed, (\d+) not started/.exec(closing!);
    expect(Number(m![1])).toBe(created());
  });
});
