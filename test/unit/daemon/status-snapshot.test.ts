import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/api/api-error.js';
import { startDaemon, type DaemonOptions, type LoadedInput, type RunningDaemon } from '../../../src/daemon/index.js';
import { InvalidInputError } from '../../../src/errors.js';
import type { DesiredState } from '../../../src/model/index.js';
import { createMetrics } from '../../../src/obs/metrics.js';
import type { StatusSnapshot } from '../../../src/report/index.js';
import type { SyncOutcome } from '../../../src/sync/run-sync.js';
import { desiredWith, fakeSignals, FakeScheduler, FakeWatcher, logSink, outcome } from '../../helpers/daemon-fakes.js';
import { VirtualTime } from '../../helpers/virtual-time.js';

/**
 * The snapshot behind /status and /status.json, as the daemon assembles it from its runs: what
 * the last run was, why it failed (one line), and whether writes are held. The daemon runs in
 * process on virtual time with a fake sync; the page is fetched over HTTP.
 */

const running: RunningDaemon[] = [];
afterEach(async () => {
  for (const d of running.splice(0)) await d.stop();
});

async function daemonWith(sync: () => Promise<SyncOutcome>, options: Partial<DaemonOptions> = {}, load?: () => Promise<LoadedInput>): Promise<RunningDaemon> {
  const daemon = await startDaemon({
    loadDesired: load ?? (async () => ({ desired: desiredWith(['alice']), watchFiles: ['access.yaml'] })),
    sync: (_d: DesiredState) => sync(),
    logger: logSink('error').logger,
    metrics: createMetrics({ version: 'test' }),
    options: { file: 'access.yaml', schedule: '*/5 * * * *', listen: '127.0.0.1:0', mode: 'apply', debounceMs: 0, shutdownGraceMs: 5000, ...options },
    timers: new VirtualTime(),
    random: () => 1,
    signals: fakeSignals(),
    scheduler: new FakeScheduler().factory,
    watcher: new FakeWatcher().factory,
  });
  running.push(daemon);
  await daemon.idle();
  return daemon;
}

async function snapshot(daemon: RunningDaemon): Promise<StatusSnapshot> {
  return (await (await fetch(`${daemon.url}/status.json`)).json()) as StatusSnapshot;
}

describe('the status snapshot of a daemon', () => {
  it('a run with a failed change: the changes it wrote, the failure with its reason, the trigger', async () => {
    const d = await daemonWith(async () =>
      outcome({ changes: [{ kind: 'sshUser', action: 'create', key: 'alice' }, { kind: 'sshUser', action: 'delete', key: 'bob' }], failed: ['bob'] }),
    );
    const [t] = (await snapshot(d)).targets;
    expect(t!.lastRun).toMatchObject({
      trigger: ['start'],
      outcome: 'partial',
      dryRun: false,
      drift: 2,
      applied: 1,
      changes: [{ kind: 'sshUser', action: 'create', key: 'alice' }],
      failures: [{ kind: 'sshUser', action: 'delete', key: 'bob', reason: '503 service unavailable' }],
      error: 'changes_failed',
    });
    expect(t!.consecutiveFailures).toBe(1);
    expect(t!.name).toBeNull();
  });

  it('a sync that throws: its code and one line of its message, never a second line', async () => {
    const d = await daemonWith(async () => {
      throw new ApiError('network', 'GET /api/sshusers: connect ECONNREFUSED 127.0.0.1:9\n    at somewhere (file.js:1:1)', { method: 'GET', path: '/api/sshusers', route: '/api/sshusers' });
    });
    const { targets } = await snapshot(d);
    expect(targets[0]!.lastRun).toMatchObject({ outcome: 'failure', applied: 0, changes: [], failures: [] });
    expect(targets[0]!.lastRun!.error).toMatch(/^network: GET \/api\/sshusers: connect ECONNREFUSED 127\.0\.0\.1:9$/);
  });

  it('a refused plan: the refusal as the run’s error', async () => {
    const d = await daemonWith(async () => outcome({ changes: [{ kind: 'sshUser', action: 'delete', key: 'bob' }], refusal: true }));
    expect((await snapshot(d)).targets[0]!.lastRun).toMatchObject({ outcome: 'refused', error: 'deletion_budget: refusing to delete 11 items: the deletion budget is 10' });
  });

  it('an invalid file before any good version: invalid_input, said in words', async () => {
    const d = await daemonWith(async () => outcome(), {}, async () => {
      throw new InvalidInputError('access.yaml is not valid', [], 'desired_invalid');
    });
    expect((await snapshot(d)).targets[0]!.lastRun).toMatchObject({ outcome: 'invalid_input', error: expect.stringMatching(/^the desired-state file is invalid/) });
  });

  it('a deny window open now: writes held, the window’s reason; the run only planned; the page says so', async () => {
    const d = await daemonWith(async () => outcome({ dryRun: true, changes: [{ kind: 'sshUser', action: 'create', key: 'alice' }] }), { windows: [{ kind: 'deny', schedule: '* * * * *', duration: '2m' }] });
    const s = await snapshot(d);
    expect(s.daemon).toMatchObject({ mode: 'apply', writes: false, suspended: null, window: { open: false, windows: 1 } });
    expect(s.daemon.window.reason).toMatch(/^inside a deny window/);
    expect(s.targets[0]!.lastRun).toMatchObject({ dryRun: true, outcome: 'success', drift: 1, applied: 0 });
    const html = await (await fetch(`${d.url}/status`)).text();
    expect(html).toMatch(/<p id="sync-window" class="warn">Sync windows \(1\): inside a deny window/);
    expect(html).toContain('(writes held: runs observe only)');
    expect(html).toContain('(trigger: start; planned only)');
  });

  it('no audit log set: no audit section', async () => {
    const d = await daemonWith(async () => outcome());
    expect((await snapshot(d)).audit).toBeNull();
  });
});
