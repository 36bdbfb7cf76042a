import { EventEmitter } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningTenants } from '../../src/emulator/index.js';
import { resetTenants } from '../helpers/emulator-per-test.js';
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

describe('Ctrl-C during a fleet sync: each target reports what its service received', () => {
  it('applied = the writes answered 2xx, failed only where a write failed, the rest not started; targets not started are skipped', async () => {
    resetTenants(fleet);
    const tenants = NAMES.map((n) => fleet.tenant(n));
    const writePath = '^/api/sshusers$';
    // t1: two creates answered, the third held on the wire when the signal comes (it finishes after it).
    tenants[0]!.setFaults({ rules: [{ method: 'POST', path: writePath, after: 2, times: 1, hold: 'before', label: 'held' }] });
    // t2: its first create refused (a failed request), its second held on the wire.
    tenants[1]!.setFaults({
      rules: [
        { method: 'POST', path: writePath, times: 1, status: 400, errors: [{ field: 'username', type: 'invalid', msg: 'refused by the test' }] },
        { method: 'POST', path: writePath, times: 1, hold: 'before', label: 'held' },
      ],
    });
    const signals = new EventEmitter();
    // Both running targets hold a write on the wire: the signal, then the held writes go on.
    const interrupted = Promise.all([tenants[0]!.whenHeld(), tenants[1]!.whenHeld()]).then(() => {
      signals.emit('SIGINT', 'SIGINT');
      tenants[0]!.releaseHeld();
      tenants[1]!.releaseHeld();
    });
    const run = await runInProcess(['sync', '--targets', 'targets.yaml', '--auto-approve', '--target-concurrency', '2', '--concurrency', '1', '--report', 'report.json'], {
      cwd: dir,
      env: { FLEET_TOKEN: TOKEN, PW: 'pw-interrupt-fleet-2', AMSYNC_STATE_KEY: 'k' },
      signals,
    });
    await interrupted;
    expect(run.code, run.stdout + run.stderr).toBe(130);
    const doc = JSON.parse(await readFile(join(dir, 'report.json'), 'utf8')) as FleetDoc;
    for (const [i, target] of doc.targets.entries()) {
      const log = tenants[i]!.requests();
      const writes = log.filter((r) => r.method !== 'GET');
      const answered = writes.filter((r) => r.status >= 200 && r.status < 300).length;
      const refused = writes.filter((r) => r.status >= 400).length;
      const results = target.results ?? [];
      const says = `${target.name}: ${JSON.stringify({ status: target.status, error: target.error })}`;
      expect(results.filter((r) => r.status === 'applied').length, says).toBe(answered);
      expect(results.filter((r) => r.status === 'failed').length, says).toBe(refused);
      // Nothing sent is reported not started: every planned change is either a write the service received or not started.
      expect(results.filter((r) => r.notStarted === true).length, says).toBe((target.summary?.create ?? 0) - writes.length);
      // Failed only where a request failed.
      expect(target.status === 'failed', says).toBe(refused > 0);
      if (log.length === 0) expect(target, says).toMatchObject({ status: 'skipped', error: { code: 'interrupted' } });
    }
    expect(doc.targets.map((t) => t.status)).toEqual(['interrupted', 'failed', 'skipped', 'skipped', 'skipped', 'skipped']);
    expect(doc.targets[0]!.error).toEqual({ code: 'interrupted', message: `interrupted: 3 of ${USERS} changes applied, ${USERS - 3} not started (never sent)` });
    expect(doc.targets[1]!.error?.message).toBe(`1 of ${USERS} changes did not apply; 1 applied, ${USERS - 2} not started (never sent)`);
    expect(doc.summary).toMatchObject({ targets: 6, interrupted: 1, failed: 1, skipped: 4 });
    // The text says the same: the interrupted target is not an error, the summary counts it.
    expect(run.stdout).toContain(`interrupted: 3 of ${USERS} changes applied, ${USERS - 3} not started (never sent)`);
    expect(run.stdout).not.toContain(`changes did not apply\n\n== target t2`);
    expect(run.stdout).toContain('Fleet: 6 targets — 1 failed, 1 interrupted, 4 skipped');
  });
});

interface FleetDoc {
  readonly summary: Record<string, number>;
  readonly targets: readonly {
    readonly name: string;
    readonly status: string;
    readonly summary: { readonly create: number } | null;
    readonly results?: readonly { readonly status: string; readonly notStarted?: true }[];
    readonly error: { readonly code: string; readonly message: string } | null;
  }[];
}
