import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { emulatorPerTest } from '../helpers/emulator-per-test.js';
import { runInProcess, type InProcessRun } from '../helpers/in-process.js';
import { FakeScheduler } from '../helpers/daemon-fakes.js';

/**
 * Ctrl-C with a deep queue (issue 27, finding 1): a service that allows 10 requests/s, 100
 * creates, and the interrupt once ten results are printed. What amsync says must match what
 * the service received: no request reaches it after the signal but those already sent, the
 * count reported applied is the count the service created, and the rest is counted, not
 * listed.
 */

const TOKEN = 'interrupt-queue-token';
const USERS = 100;

let emu: RunningEmulator;
let dir: string;

emulatorPerTest(TOKEN, 'amsync-interrupt-queue-', (e, d) => {
  emu = e;
  dir = d;
});
beforeEach(async () => {
  // The service's own limit: amsync's limiter starts above it (10 requests/s, discovering), so
  // some writes are answered 503 and retried — no retry may start after the signal either. Its
  // latency keeps a write or two on the wire when the signal comes: they finish, and count.
  emu.setFaults({ rateLimit: 5, latencyMs: 250 });
  const users = Array.from({ length: USERS }, (_, i) => `  - username: user-${String(i).padStart(3, '0')}\n    password: { env: PW }\n`).join('');
  await writeFile(join(dir, 'access.yaml'), `sshUsers:\n${users}`);
});

const env = () => ({ AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN, PW: 'pw-interrupt-queue-1', AMSYNC_STATE_KEY: 'k' });
const posts = () => emu.requests().filter((r) => r.method === 'POST');
const count = (text: string, what: string) => text.split(what).length - 1;

interface Interrupted {
  readonly run: InProcessRun;
  /** POSTs that had reached the service (answered, or arrived and not answered yet) when the signal came. */
  readonly arrivedBefore: number;
  /** Of those, the ones the service had not answered yet: on the wire for amsync too. */
  readonly inFlightAtSignal: number;
}

/** `amsync sync` in-process; SIGINT once `after` results are printed, taken from the service's log at that instant. */
async function syncInterrupted(after: number, tty: boolean): Promise<Interrupted> {
  const signals = new EventEmitter();
  let arrivedBefore: number | undefined;
  let inFlightAtSignal = 0;
  const run = await runInProcess(['sync', '--auto-approve'], {
    cwd: dir,
    env: env(),
    tty,
    signals,
    onStdout: (_chunk, all) => {
      if (arrivedBefore !== undefined || count(all, '✓ created sshUser') < after) return;
      // Every API request in flight at the service now is one of the writes (the listing is over).
      inFlightAtSignal = emu.inFlight();
      arrivedBefore = posts().length + inFlightAtSignal;
      signals.emit('SIGINT', 'SIGINT');
    },
  });
  expect(arrivedBefore, run.stderr).toBeDefined();
  return { run, arrivedBefore: arrivedBefore!, inFlightAtSignal };
}

/** `Apply: 10 applied, 1 failed, 0 skipped, 89 not started.` */
function applyCounts(stdout: string): { applied: number; failed: number; skipped: number; notStarted: number } {
  const m = /Apply: (\d+) applied, (\d+) failed, (\d+) skipped, (\d+) not started\./.exec(stdout);
  expect(m, stdout.slice(-400)).not.toBeNull();
  return { applied: Number(m![1]), failed: Number(m![2]), skipped: Number(m![3]), notStarted: Number(m![4]) };
}

/** `SIGINT: stopping: nothing more is sent; the 2 requests already sent …`: the count amsync gave at the signal. */
function sentAtSignal(stderr: string): number {
  const m = /SIGINT: stopping: nothing more is sent(?:; the (\d+) requests? already sent|, and no request)/.exec(stderr);
  expect(m, stderr.slice(0, 600)).not.toBeNull();
  return m![1] === undefined ? 0 : Number(m![1]);
}

function checkAgainstService({ run, arrivedBefore, inFlightAtSignal }: Interrupted): { applied: number; notStarted: number } {
  expect(run.code, run.stderr).toBe(130);
  // Nothing reached the service after the signal but the requests amsync said were already
  // sent and that had not arrived yet (those the service held then are counted in both), and
  // no retry of a write answered 503 after it.
  const arrivedAfter = posts().length - arrivedBefore;
  expect(arrivedAfter).toBeLessThanOrEqual(sentAtSignal(run.stderr) - inFlightAtSignal);
  const created = emu.state().sshUsers.length;
  const counts = applyCounts(run.stdout);
  // Applied is what the service received and did: its log and its state agree with the report.
  expect(counts.applied).toBe(created);
  expect(posts().filter((r) => r.status === 200)).toHaveLength(created);
  expect(counts.applied + counts.failed + counts.skipped + counts.notStarted).toBe(USERS);
  expect(counts.skipped).toBe(0);
  expect(counts.notStarted).toBeGreaterThan(0);
  // The closing line gives the same counts, and makes no claim the log contradicts.
  const closing = run.stderr.split('\n').find((l) => l.includes('interrupted by SIGINT'));
  expect(closing, run.stderr).toBeDefined();
  expect(closing).toContain(`${counts.applied} applied, ${counts.failed} failed, ${counts.notStarted} not started`);
  return counts;
}

describe('Ctrl-C with writes queued in the limiter: everything not on the wire is cancelled', () => {
  it('sends nothing after the signal but the requests already sent, and reports applied as the service received it', async () => {
    const interrupted = await syncInterrupted(10, false);
    const { notStarted } = checkAgainstService(interrupted);
    // Counted, not listed one by one.
    expect(count(interrupted.run.stdout, 'not started')).toBeLessThanOrEqual(2);
    expect(interrupted.run.stdout).toContain(`${notStarted} changes not started: interrupted (SIGINT)`);
  });

  it('at a terminal: one line for the changes not started, not one line each', async () => {
    const interrupted = await syncInterrupted(10, true);
    const { notStarted } = checkAgainstService(interrupted);
    const lines = interrupted.run.stdout.split('\n');
    expect(lines.filter((l) => l.includes('not started') && !l.startsWith('Apply:'))).toEqual([`· ${notStarted} changes not started: interrupted (SIGINT)`]);
    expect(lines.filter((l) => l.startsWith('· skipped'))).toEqual([]);
  });
});

describe('Ctrl-C during amsync apply PLANFILE: the same rule', () => {
  it('sends nothing after the signal but what was on the wire, and reports the counts', async () => {
    emu.setFaults({ rateLimit: null, latencyMs: 0 });
    const planned = await runInProcess(['plan', '--out', 'plan.json'], { cwd: dir, env: env() });
    expect(planned.code, planned.stderr).toBe(0);
    emu.setFaults({ rateLimit: 5, latencyMs: 250 });
    emu.clearRequests();
    const signals = new EventEmitter();
    let arrivedBefore: number | undefined;
    let inFlightAtSignal = 0;
    const running = runInProcess(['apply', 'plan.json'], { cwd: dir, env: env(), signals });
    // apply prints its results at the end: the signal comes on what the service has created.
    const watch = setInterval(() => {
      if (arrivedBefore !== undefined || emu.state().sshUsers.length < 10) return;
      inFlightAtSignal = emu.inFlight();
      arrivedBefore = posts().length + inFlightAtSignal;
      signals.emit('SIGINT', 'SIGINT');
    }, 5);
    const run = await running.finally(() => clearInterval(watch));
    expect(arrivedBefore, run.stderr).toBeDefined();
    checkAgainstService({ run, arrivedBefore: arrivedBefore!, inFlightAtSignal });
  });
});

describe('Ctrl-C at the confirmation prompt', () => {
  it('says nothing of changes in flight: nothing was sent, nothing is written, exit 130', async () => {
    emu.setFaults({ rateLimit: null, latencyMs: 0 });
    const signals = new EventEmitter();
    const stdin = new PassThrough();
    let asked = false;
    const run = await runInProcess(['sync'], {
      cwd: dir,
      env: env(),
      tty: true,
      stdin,
      signals,
      onStdout: (_chunk, all) => {
        if (asked || !all.includes('Enter a value: ')) return;
        asked = true;
        // As a person would: once the question is out and amsync waits for the answer.
        setImmediate(() => signals.emit('SIGINT', 'SIGINT'));
      },
    });
    expect(asked).toBe(true);
    expect(run.stderr).not.toMatch(/in flight/);
    expect(run.stderr).toContain('SIGINT: stopping: nothing more is sent, and no request is waiting for an answer');
    expect(run.stderr).toContain('interrupted by SIGINT at the confirmation: nothing was written');
    expect(run.code).toBe(130);
    expect(emu.requests().filter((r) => r.method !== 'GET')).toEqual([]);
    expect(emu.state().sshUsers).toEqual([]);
  });
});

describe('Ctrl-C during the listing', () => {
  it('ends the run before anything is written: exit 130, no write sent, no listing failure reported', async () => {
    // Five pages of a hundred, each a quarter of a second: the signal comes after the first.
    emu.seed({ sshUsers: Array.from({ length: 500 }, (_, i) => ({ username: `listed-${i}`, level: 'n1', password: 'x' })) });
    emu.setFaults({ rateLimit: null, latencyMs: 250 });
    emu.clearRequests();
    const signals = new EventEmitter();
    const running = runInProcess(['sync', '--page-size', '100'], { cwd: dir, env: env(), signals });
    const watch = setInterval(() => {
      if (emu.requests().length === 0) return;
      clearInterval(watch);
      signals.emit('SIGINT', 'SIGINT');
    }, 5);
    const run = await running.finally(() => clearInterval(watch));
    expect(run.code, run.stderr).toBe(130);
    expect(run.stderr).toContain('error: interrupted by SIGINT before any change was sent: nothing was written');
    expect(run.stderr).not.toContain('listing incomplete');
    expect(emu.requests().filter((r) => r.method !== 'GET')).toEqual([]);
    expect(emu.requests().length).toBeLessThan(5);
  });
});

describe('SIGTERM to the daemon mid-apply: the same rule', () => {
  it('its run sends nothing more, what was on the wire finishes, the log counts the rest; exit 0', async () => {
    await writeFile(join(dir, 'settings.yaml'), 'daemon:\n  shutdownGraceMs: 30000\n');
    const signals = new EventEmitter();
    let arrivedBefore: number | undefined;
    const lines: Record<string, unknown>[] = [];
    let partial = '';
    const running = runInProcess(
      ['daemon', '--listen', '127.0.0.1:0', '--schedule', '*/5 * * * *', '--state-file', join(dir, 'state.json'), '--settings', join(dir, 'settings.yaml')],
      {
        cwd: dir,
        env: { ...env(), AMSYNC_FILE: join(dir, 'access.yaml') },
        signals,
        scheduler: new FakeScheduler().factory,
        onStderr: (chunk) => {
          const parts = (partial + chunk).split('\n');
          partial = parts.pop() ?? '';
          for (const part of parts) if (part.startsWith('{')) lines.push(JSON.parse(part) as Record<string, unknown>);
        },
      },
    );
    // The daemon logs its results once the run is over: the signal comes on what the service
    // has created, read from its state, and what had reached it is taken at that instant.
    let inFlightAtSignal = 0;
    const watch = setInterval(() => {
      if (arrivedBefore !== undefined || emu.state().sshUsers.length < 10) return;
      inFlightAtSignal = emu.inFlight();
      arrivedBefore = posts().length + inFlightAtSignal;
      signals.emit('SIGTERM', 'SIGTERM');
    }, 5);
    const run = await running.finally(() => clearInterval(watch));
    expect(arrivedBefore, run.stderr.slice(-2000)).toBeDefined();
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    const stopping = lines.find((l) => String(l.msg).startsWith('stopping'));
    expect(stopping).toMatchObject({ reason: 'SIGTERM', sent: expect.any(Number) });
    // Only requests amsync had sent and the service had not seen yet may arrive after it.
    expect(posts().length - arrivedBefore!).toBeLessThanOrEqual((stopping!.sent as number) - inFlightAtSignal);
    const finished = lines.find((l) => l.msg === 'sync finished');
    const created = emu.state().sshUsers.length;
    expect(finished).toMatchObject({ applied: created });
    expect((finished!.applied as number) + (finished!.failed as number) + (finished!.notStarted as number)).toBe(USERS);
    expect(lines.filter((l) => l.msg === 'change skipped')).toEqual([]);
    expect(lines.filter((l) => String(l.msg).includes('not started'))).toEqual([
      expect.objectContaining({ notStarted: finished!.notStarted, reason: 'not started: the daemon is stopping (SIGTERM)' }),
    ]);
  });
});

describe('Ctrl-C during a fleet sync: the same rule on every target', () => {
  it('no target sends anything after the signal but what was on the wire; the counts are over all targets', async () => {
    const fleet = await startEmulator({ tokens: [TOKEN], tenants: ['one', 'two'], rateLimit: 5, latencyMs: 250 });
    try {
      const tenants = fleet.tenantNames.map((name) => fleet.tenant(name));
      const fleetPosts = () => tenants.flatMap((t) => t.requests().filter((r) => r.method === 'POST'));
      const created = () => tenants.reduce((n, t) => n + t.state().sshUsers.length, 0);
      await writeFile(join(dir, 'targets.yaml'), `targets:\n${tenants.map((t) => `  - name: ${t.name}\n    url: ${t.url}\n    token: { env: FLEET_TOKEN }\n`).join('')}`);
      const signals = new EventEmitter();
      let arrivedBefore: number | undefined;
      const running = runInProcess(['sync', '--targets', 'targets.yaml'], { cwd: dir, env: { FLEET_TOKEN: TOKEN, PW: 'pw-interrupt-queue-1', AMSYNC_STATE_KEY: 'k' }, signals });
      // Each target's section is printed once it is done: the signal comes on what the services
      // have created, and what had reached them is taken at that instant.
      let inFlightAtSignal = 0;
      const watch = setInterval(() => {
        if (arrivedBefore !== undefined || created() < 10) return;
        inFlightAtSignal = tenants.reduce((n, t) => n + t.inFlight(), 0);
        arrivedBefore = fleetPosts().length + inFlightAtSignal;
        signals.emit('SIGINT', 'SIGINT');
      }, 5);
      const run = await running.finally(() => clearInterval(watch));
      expect(arrivedBefore, run.stderr).toBeDefined();
      expect(run.code, run.stderr).toBe(130);
      expect(fleetPosts().length - arrivedBefore!).toBeLessThanOrEqual(sentAtSignal(run.stderr) - inFlightAtSignal);
      const closing = run.stderr.split('\n').find((l) => l.includes('interrupted by SIGINT'));
      expect(closing, run.stderr).toContain(`${created()} applied, `);
      const m = /(\d+) applied, (\d+) failed, (\d+) not started/.exec(closing!);
      expect(Number(m![1]) + Number(m![2]) + Number(m![3])).toBe(2 * USERS);
      // Each target's section counts its own, in one line (its last line then says what it came to).
      expect(run.stdout.split('\n').filter((l) => l.startsWith('· ') && l.includes('not started'))).toHaveLength(2);
    } finally {
      await fleet.close();
    }
  });
});
