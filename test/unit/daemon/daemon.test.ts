import { LockWaitStoppedError } from '../../../src/errors.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { SyncOutcome } from '../../../src/sync/run-sync.js';
import { DaemonError, startDaemon, type DaemonOptions, type LoadedInput, type RunningDaemon } from '../../../src/daemon/index.js';
import { ApiError } from '../../../src/api/api-error.js';
import { pageFailed } from '../../../src/api/listing-incomplete-error.js';
import { AmsyncError, InvalidInputError } from '../../../src/errors.js';
import type { DesiredState, NotifyEvent } from '../../../src/model/index.js';
import { createMetrics } from '../../../src/obs/metrics.js';
import { deferred, waitFor } from '../../helpers/daemon-deferred.js';
import { VirtualTime, settle } from '../../helpers/virtual-time.js';
import { desiredWith, fakeSignals, FakeScheduler, FakeWatcher, logSink, outcome } from '../../helpers/daemon-fakes.js';
import { parseExposition } from '../../helpers/daemon-prom-parse.js';

const invalid = () =>
  new InvalidInputError(
    'access.yaml is not a valid desired-state file (1 error); nothing was sent',
    [{ severity: 'error', code: 'unknown_key', message: "unknown key 'levl'", path: 'sshUsers[0].levl', position: { file: 'access.yaml', line: 3, col: 5 } }],
    'desired_invalid',
  );

interface SyncCall {
  readonly desired: DesiredState;
  readonly dryRun: boolean;
}

async function harness(options: Partial<DaemonOptions> = {}) {
  const timers = new VirtualTime();
  const scheduler = new FakeScheduler();
  const watcher = new FakeWatcher();
  const signals = fakeSignals();
  const log = logSink();
  const metrics = createMetrics({ version: 'test' });
  const calls: SyncCall[] = [];
  const events: NotifyEvent[] = [];
  const h = {
    events,
    timers,
    scheduler,
    watcher,
    signals,
    log,
    metrics,
    calls,
    load: async (): Promise<LoadedInput> => ({ desired: desiredWith(['alice-canary']), watchFiles: ['access.yaml'] }),
    sync: async (_d: DesiredState, o: { dryRun: boolean; signal: AbortSignal; stop: AbortSignal }): Promise<SyncOutcome> => outcome({ dryRun: o.dryRun }),
    reload: undefined as undefined | (() => Promise<Partial<DaemonOptions> | void>),
    daemon: undefined as unknown as RunningDaemon,
    async get(path: string) {
      const res = await fetch(`${h.daemon.url}${path}`);
      return { status: res.status, text: await res.text() };
    },
    async scrape() {
      return parseExposition((await h.get('/metrics')).text);
    },
  };
  h.daemon = await startDaemon({
    loadDesired: () => h.load(),
    sync: (desired, o) => {
      calls.push({ desired, dryRun: o.dryRun });
      return h.sync(desired, o);
    },
    reloadSettings: async () => (h.reload ? ((await h.reload()) as never) : undefined),
    logger: log.logger,
    metrics,
    options: { file: 'access.yaml', schedule: '*/5 * * * *', listen: '127.0.0.1:0', mode: 'apply', debounceMs: 100, shutdownGraceMs: 5000, ...options },
    timers,
    random: () => 1,
    signals,
    scheduler: scheduler.factory,
    watcher: watcher.factory,
    notify: (event) => events.push(event),
  });
  running.push(h.daemon);
  return h;
}

const running: RunningDaemon[] = [];
afterEach(async () => {
  for (const d of running.splice(0)) await d.stop();
});

describe('triggers: one sync at start, then on file changes, on schedule and on SIGHUP', () => {
  it('syncs once at start and becomes ready', async () => {
    const h = await harness();
    expect((await h.get('/healthz')).status).toBe(200);
    await h.daemon.idle();
    expect(h.calls).toEqual([{ desired: desiredWith(['alice-canary']), dryRun: false }]);
    expect(await h.get('/readyz')).toEqual({ status: 200, text: 'ready: ok\n' });
    expect(h.watcher.files).toEqual(['access.yaml', 'access.yaml']);
  });

  it('runs again on a file change, a scheduled time, and SIGHUP (which reloads the settings first)', async () => {
    const h = await harness();
    await h.daemon.idle();
    h.watcher.change();
    await h.daemon.idle();
    h.scheduler.fire();
    await h.daemon.idle();
    let reloaded = 0;
    h.reload = async () => {
      reloaded += 1;
    };
    h.signals.emit('SIGHUP', 'SIGHUP');
    await h.daemon.idle();
    expect(h.calls).toHaveLength(4);
    expect(reloaded).toBe(1);
    const e = await h.scrape();
    expect(e.value('amsync_sync_runs_total', { outcome: 'success' })).toBe(4);
  });

  it('never runs two syncs at once: triggers during a run coalesce into one follow-up', async () => {
    const h = await harness();
    const gate = deferred<void>();
    let inFlight = 0;
    let maxInFlight = 0;
    h.sync = async (_d, o) => {
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await gate.promise;
      inFlight -= 1;
      return outcome({ dryRun: o.dryRun });
    };
    h.daemon.trigger('file');
    await settle();
    for (let i = 0; i < 5; i += 1) {
      h.watcher.change();
      h.scheduler.fire();
    }
    await settle();
    expect(h.daemon.status().running).toBe(true);
    gate.resolve();
    await waitFor(async () => {
      await h.daemon.idle();
      return !h.daemon.status().running;
    }, 'the runs to end');
    // The start run (which may have taken the first trigger) and exactly one follow-up.
    expect(h.calls.length).toBeLessThanOrEqual(2);
    expect(h.calls.length).toBeGreaterThanOrEqual(1);
    expect(maxInFlight).toBe(1);
  });

  it('updates the watched files from what the file references', async () => {
    const h = await harness();
    h.load = async () => ({ desired: desiredWith(['a']), watchFiles: ['access.yaml', 'secrets/deploy'] });
    h.watcher.change();
    await h.daemon.idle();
    await settle();
    expect(h.watcher.files).toEqual(['access.yaml', 'access.yaml', 'secrets/deploy']);
  });
});

describe('warnings of a valid file', () => {
  it('are logged once per version of the file, not at every run', async () => {
    const h = await harness();
    await h.daemon.idle();
    let hash = 'h1';
    const warning = { severity: 'warning' as const, code: 'literal_password', message: 'a literal password: use { env: ... } or { file: ... }', path: 'sshUsers[0].password', position: { file: 'access.yaml', line: 4, col: 15 } };
    h.load = async () => ({ desired: desiredWith(['a']), watchFiles: [], warnings: [warning], fileHash: hash });
    const count = () => h.log.lines.filter((l) => l.code === 'literal_password').length;
    h.watcher.change();
    await h.daemon.idle();
    h.scheduler.fire();
    await h.daemon.idle();
    expect(count()).toBe(1);
    hash = 'h2';
    h.watcher.change();
    await h.daemon.idle();
    expect(count()).toBe(2);
    expect(h.log.lines.find((l) => l.code === 'literal_password')).toMatchObject({ level: 40, line: 4, col: 15, msg: 'access.yaml:4:15: warning: a literal password: use { env: ... } or { file: ... } (sshUsers[0].password)' });
  });
});

describe('--mode observe plans only and reports drift', () => {
  it('never applies, and shows the drift in logs and metrics', async () => {
    const h = await harness({ mode: 'observe' });
    h.sync = async () => outcome({ dryRun: true, changes: [{ kind: 'sshUser', action: 'create', key: 'bob-canary' }, { kind: 'apikey', action: 'update', key: 'k' }], unmanaged: [{ kind: 'apikey', key: 'manual' }] });
    h.daemon.trigger('file');
    await h.daemon.idle();
    expect(h.calls.every((c) => !c.dryRun)).toBe(false);
    expect(h.calls.every((c) => c.dryRun)).toBe(true);
    const e = await h.scrape();
    expect(e.value('amsync_drifted_items', { kind: 'sshUser' })).toBe(1);
    expect(e.value('amsync_drifted_items', { kind: 'apikey' })).toBe(1);
    expect(e.value('amsync_unmanaged_items', { kind: 'apikey' })).toBe(1);
    expect(h.log.lines.some((l) => String(l.msg).startsWith('drift detected; not corrected (observe mode)'))).toBe(true);
    expect((await h.get('/readyz')).status).toBe(200);
  });
});

describe('bad input while running', () => {
  it('keeps the last good desired state, logs positioned errors, applies nothing, and recovers by itself', async () => {
    const h = await harness();
    await h.daemon.idle();
    const good = h.calls[0]!.desired;
    h.load = async () => {
      throw invalid();
    };
    h.watcher.change();
    await h.daemon.idle();
    expect(h.calls[1]).toEqual({ desired: good, dryRun: true });
    let e = await h.scrape();
    expect(e.value('amsync_config_valid')).toBe(0);
    expect(e.value('amsync_sync_runs_total', { outcome: 'invalid_input' })).toBe(1);
    const positioned = h.log.lines.find((l) => l.code === 'unknown_key');
    expect(positioned).toMatchObject({ file: 'access.yaml', line: 3, col: 5, msg: "access.yaml:3:5: error: unknown key 'levl' (sshUsers[0].levl)" });
    // The service stays in the last good state, so the pod stays ready.
    expect((await h.get('/readyz')).text).toMatch(/^ready: ok \(the desired-state file is invalid/);
    // Scheduled runs go on planning the last good version, never applying.
    h.scheduler.fire();
    await h.daemon.idle();
    expect(h.calls[2]).toEqual({ desired: good, dryRun: true });

    h.load = async () => ({ desired: desiredWith(['carol']), watchFiles: ['access.yaml'] });
    h.watcher.change();
    await h.daemon.idle();
    expect(h.calls[3]).toEqual({ desired: desiredWith(['carol']), dryRun: false });
    e = await h.scrape();
    expect(e.value('amsync_config_valid')).toBe(1);
  });

  it('treats an unset env secret or unreadable secret file the same way', async () => {
    const h = await harness();
    await h.daemon.idle();
    h.load = async () => {
      throw new InvalidInputError('access.yaml: 1 error', [{ severity: 'error', code: 'secret_file_unreadable', message: 'cannot read the secret file secrets/deploy: no such file', path: 'sshUsers[0].password', position: { file: 'access.yaml', line: 4, col: 15 } }], 'desired_invalid');
    };
    h.watcher.change(['secrets/deploy']);
    await h.daemon.idle();
    expect(h.calls.at(-1)!.dryRun).toBe(true);
    expect((await h.scrape()).value('amsync_config_valid')).toBe(0);
  });

  it('notices a fix that no watched file shows (a secret file created in a new directory) by itself', async () => {
    const h = await harness({ invalidRecheckMs: 2000 });
    await h.daemon.idle();
    let fixed = false;
    h.load = async () => {
      if (!fixed) throw invalid();
      return { desired: desiredWith(['dave']), watchFiles: ['access.yaml'] };
    };
    h.watcher.change();
    await h.daemon.idle();
    expect(h.calls).toHaveLength(2);
    await h.timers.advance(2000);
    await h.daemon.idle();
    // Still invalid: the recheck only loads, offline; no run, no request.
    expect(h.calls).toHaveLength(2);
    fixed = true;
    await h.timers.advance(2000);
    await h.daemon.idle();
    expect(h.calls).toHaveLength(3);
    expect(h.calls[2]).toEqual({ desired: desiredWith(['dave']), dryRun: false });
  });
});

describe('invalid from the very start', () => {
  it('never calls sync until the file loads', async () => {
    let fixed = false;
    const timers = new VirtualTime();
    const log = logSink();
    const metrics = createMetrics({ version: 'test' });
    const calls: boolean[] = [];
    const daemon = await startDaemon({
      loadDesired: async () => {
        if (!fixed) throw invalid();
        return { desired: desiredWith(['erin']), watchFiles: [] };
      },
      sync: async (_d, o) => {
        calls.push(o.dryRun);
        return outcome({ dryRun: o.dryRun });
      },
      logger: log.logger,
      metrics,
      options: { file: 'access.yaml', schedule: '* * * * *', listen: '127.0.0.1:0', mode: 'apply', debounceMs: 10, shutdownGraceMs: 1000, invalidRecheckMs: 1000 },
      timers,
      signals: null,
      scheduler: new FakeScheduler().factory,
      watcher: new FakeWatcher().factory,
    });
    running.push(daemon);
    await daemon.idle();
    expect(calls).toEqual([]);
    const ready = await fetch(`${daemon.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.text()).toMatch(/invalid/);
    expect(parseExposition(await (await fetch(`${daemon.url}/metrics`)).text()).value('amsync_config_valid')).toBe(0);
    await timers.advance(1000);
    await daemon.idle();
    expect(calls).toEqual([]);
    fixed = true;
    await timers.advance(1000);
    await daemon.idle();
    expect(calls).toEqual([false]);
    expect((await fetch(`${daemon.url}/readyz`)).status).toBe(200);
  });
});

describe('service failures never crash the daemon', () => {
  it('retries with backoff, turns unready when failures persist, and recovers', async () => {
    const h = await harness({ backoff: { baseMs: 1000, maxMs: 60_000 }, readiness: { failureThreshold: 3 } });
    await h.daemon.idle();
    let down = true;
    h.sync = async (_d, o) => {
      if (down) throw new AmsyncError('unavailable', 'GET /api/sshusers: 503 service unavailable after 8 attempts');
      return outcome({ dryRun: o.dryRun });
    };
    h.watcher.change();
    await h.daemon.idle();
    expect(h.calls).toHaveLength(2);
    expect((await h.get('/readyz')).status).toBe(200);
    await h.timers.advance(1000);
    await h.daemon.idle();
    expect(h.calls).toHaveLength(3);
    await h.timers.advance(1999);
    expect(h.calls).toHaveLength(3);
    await h.timers.advance(1);
    await h.daemon.idle();
    expect(h.calls).toHaveLength(4);
    expect(await h.get('/readyz')).toEqual({ status: 503, text: 'not ready: the last 3 runs failed: unavailable\n' });
    const e = await h.scrape();
    expect(e.value('amsync_sync_runs_total', { outcome: 'failure' })).toBe(3);
    expect(e.value('amsync_consecutive_failed_runs')).toBe(3);
    expect(e.value('amsync_ready')).toBe(0);
    down = false;
    await h.timers.advance(4000);
    await h.daemon.idle();
    expect(h.calls).toHaveLength(5);
    expect((await h.get('/readyz')).status).toBe(200);
    expect((await h.scrape()).value('amsync_ready')).toBe(1);
  });

  it('counts failed changes as a partial run, retried; and a refusal as refused, not retried', async () => {
    const h = await harness({ backoff: { baseMs: 1000, maxMs: 60_000 } });
    await h.daemon.idle();
    h.sync = async () => outcome({ changes: [{ kind: 'sshUser', action: 'create', key: 'bob-canary' }, { kind: 'sshUser', action: 'update', key: 'x' }], failed: ['bob-canary'] });
    h.watcher.change();
    await h.daemon.idle();
    let e = await h.scrape();
    expect(e.value('amsync_sync_runs_total', { outcome: 'partial' })).toBe(1);
    expect(e.value('amsync_changes_total', { kind: 'sshUser', action: 'create', outcome: 'failed' })).toBe(1);
    expect(e.value('amsync_changes_total', { kind: 'sshUser', action: 'update', outcome: 'applied' })).toBe(1);
    expect(h.timers.pendingDelays()).toContain(1000);
    h.sync = async () => outcome({ refusal: true, changes: [{ kind: 'apikey', action: 'delete', key: 'k' }] });
    await h.timers.advance(1000);
    await h.daemon.idle();
    e = await h.scrape();
    expect(e.value('amsync_sync_runs_total', { outcome: 'refused' })).toBe(1);
    expect(h.timers.pendingDelays()).toEqual([]);
    expect(h.log.lines.some((l) => l.code === 'deletion_budget')).toBe(true);
  });
});

describe('metrics after a sync that corrected drift', () => {
  it('count changes by kind, action and outcome, and carry no username in any label', async () => {
    const h = await harness();
    await h.daemon.idle();
    h.sync = async () =>
      outcome({
        changes: [
          { kind: 'sshUser', action: 'create', key: 'alice-canary' },
          { kind: 'sshUser', action: 'update', key: 'bob-canary' },
          { kind: 'apikey', action: 'delete', key: 'carol-key-canary' },
        ],
        unmanaged: [{ kind: 'sshUser', key: 'dave-canary' }],
      });
    h.scheduler.fire();
    await h.daemon.idle();
    const text = (await h.get('/metrics')).text;
    const e = parseExposition(text);
    expect(e.value('amsync_drifted_items', { kind: 'sshUser' })).toBe(2);
    expect(e.value('amsync_drifted_items', { kind: 'apikey' })).toBe(1);
    expect(e.value('amsync_unmanaged_items', { kind: 'sshUser' })).toBe(1);
    expect(e.value('amsync_changes_total', { kind: 'apikey', action: 'delete', outcome: 'applied' })).toBe(1);
    expect(e.value('amsync_sync_duration_seconds_count', { outcome: 'success' })).toBe(2);
    expect(e.value('amsync_last_successful_sync_timestamp_seconds')).toBeGreaterThan(1_700_000_000);
    for (const s of e.samples()) for (const v of Object.values(s.labels)) expect(v).not.toMatch(/canary/);
    expect(text).not.toMatch(/canary/);
  });
});

describe('every run has a deadline: past it the run is abandoned, health reports it, the next run goes ahead', () => {
  const deadline = 60_000;

  it('a run whose requests honour the abort: abandoned at the deadline, counted, not ready until a run completes', async () => {
    const h = await harness({ runDeadlineMs: deadline });
    await h.daemon.idle();
    expect((await h.get('/readyz')).status).toBe(200);
    const signals: AbortSignal[] = [];
    // A service that never answers: the request ends only when the run's signal aborts it.
    h.sync = (_d, o) =>
      new Promise((_resolve, reject) => {
        signals.push(o.signal);
        o.signal.addEventListener('abort', () => reject(new AmsyncError('cancelled', 'GET /api/sshusers: cancelled')));
      });
    h.watcher.change();
    await h.timers.advance(deadline - 1);
    expect(h.daemon.status()).toMatchObject({ running: true, ready: true });
    await h.timers.advance(1);
    expect(signals).toHaveLength(1);
    expect(signals[0]!.aborted).toBe(true);
    expect(h.daemon.status()).toMatchObject({ running: false, stuck: false, lastRunAbandoned: true, lastError: 'run_deadline', ready: false });
    expect(await h.get('/readyz')).toEqual({ status: 503, text: 'not ready: the last run passed its deadline (60 s) and was abandoned; the next run goes ahead\n' });
    expect((await h.get('/healthz')).status).toBe(200);
    const e = await h.scrape();
    expect(e.value('amsync_sync_runs_abandoned_total')).toBe(1);
    expect(e.value('amsync_sync_runs_total', { outcome: 'failure' })).toBe(1);
    expect(e.value('amsync_sync_in_progress')).toBe(0);
    expect(h.log.lines.some((l) => l.code === 'run_deadline' && String(l.msg).includes('abandoned'))).toBe(true);
    // The retry after backoff is the next run, and it goes ahead.
    h.sync = async (_d, o) => outcome({ dryRun: o.dryRun });
    await h.timers.advance(10_000);
    await h.daemon.idle();
    expect(h.calls).toHaveLength(3);
    expect(h.daemon.status()).toMatchObject({ lastRunAbandoned: false, ready: true });
    expect((await h.get('/readyz')).status).toBe(200);
  });

  it('a run wedged where no signal reaches: /healthz and /readyz are 503 until it stops, and the next run goes ahead meanwhile', async () => {
    const h = await harness({ runDeadlineMs: deadline });
    await h.daemon.idle();
    const wedged = deferred<SyncOutcome>();
    // Like a read of a FIFO: it ignores the abort and never settles by itself.
    h.sync = () => wedged.promise;
    h.watcher.change();
    await h.timers.advance(deadline);
    expect(h.daemon.status()).toMatchObject({ stuck: true, ready: false });
    expect(await h.get('/healthz')).toEqual({ status: 503, text: 'not ok: a sync run passed its deadline (60 s), was abandoned, and has not stopped\n' });
    expect((await h.get('/readyz')).status).toBe(503);
    // Single flight holds for the loop, not for the wedged work: the next run is not blocked by it.
    h.sync = async (_d, o) => outcome({ dryRun: o.dryRun });
    h.watcher.change();
    await h.daemon.idle();
    await settle();
    expect(h.calls).toHaveLength(3);
    expect((await h.get('/healthz')).status).toBe(503);
    // Once it stops, liveness is back; what it returned late is not recorded.
    wedged.resolve(outcome({ changes: [{ kind: 'sshUser', action: 'delete', key: 'late' }] }));
    await settle();
    expect(h.daemon.status()).toMatchObject({ stuck: false, ready: true });
    expect((await h.get('/healthz')).status).toBe(200);
    const e = await h.scrape();
    expect(e.value('amsync_changes_total', { kind: 'sshUser', action: 'delete', outcome: 'applied' })).toBeUndefined();
    expect(e.value('amsync_sync_runs_abandoned_total')).toBe(1);
  });

  it('the deadline is checked as an option and defaults to ten minutes', async () => {
    await expect(harness({ runDeadlineMs: 0 })).rejects.toThrow('Expected `runDeadlineMs` to be a number of milliseconds above 0, got 0');
    const h = await harness();
    expect(h.daemon.status().runDeadlineMs).toBe(600_000);
  });
});

describe('shutdown', () => {
  it('SIGTERM stops the triggers, lets the running sync finish, then resolves', async () => {
    const h = await harness();
    await h.daemon.idle();
    const gate = deferred<void>();
    h.sync = async (_d, o) => {
      await gate.promise;
      return outcome({ dryRun: o.dryRun });
    };
    h.watcher.change();
    await settle();
    h.signals.emit('SIGTERM', 'SIGTERM');
    await settle();
    expect(h.scheduler.stopped).toBe(1);
    expect(h.watcher.closed).toBe(true);
    expect((await h.get('/readyz')).text).toBe('not ready: shutting down\n');
    h.watcher.change();
    let result: unknown;
    void h.daemon.stopped.then((r) => (result = r));
    await settle();
    expect(result).toBeUndefined();
    gate.resolve();
    expect(await h.daemon.stopped).toEqual({ reason: 'SIGTERM', finished: true, forced: false });
    expect(h.calls).toHaveLength(2);
    await expect(fetch(`${h.daemon.url}/healthz`)).rejects.toThrow();
    expect(h.signals.listenerCount('SIGTERM')).toBe(0);
  });

  /**
   * SIGTERM reaches a run that then ends with `thrown` (what the client or the lock throws when
   * the stop cuts it short): the daemon stops cleanly, and nothing calls it a failure.
   */
  async function stoppedWhile(thrown: () => Error): Promise<void> {
    const h = await harness();
    await h.daemon.idle();
    const gate = deferred<void>();
    let seen: { stop: AbortSignal } | undefined;
    h.sync = async (_d, o) => {
      seen = o;
      await gate.promise;
      throw thrown();
    };
    h.watcher.change();
    await waitFor(() => seen, 'the run');
    h.signals.emit('SIGTERM', 'SIGTERM');
    gate.resolve();
    expect(await h.daemon.stopped).toEqual({ reason: 'SIGTERM', finished: true, forced: false });
    expect(h.events.filter((e) => e.event === 'failure')).toEqual([]);
    expect(h.log.lines.filter((l) => l.msg === 'sync failed; nothing more was changed')).toEqual([]);
    expect(h.log.lines.some((l) => l.code === 'stopped')).toBe(true);
  }

  it('SIGTERM while a listing waits to retry a 503: the run ended by the stop, not a failure of the service (no failure event, no "sync failed")', async () => {
    // What the client throws when the stop ends the backoff after a 503 (request-executor #stoppedError).
    await stoppedWhile(() =>
      pageFailed(
        '/api/sshusers',
        0,
        0,
        new ApiError('unavailable', 'GET /api/sshusers: 503 service unavailable; not retried: the daemon is stopping (SIGTERM)', {
          method: 'GET',
          path: '/api/sshusers',
          route: '/api/sshusers',
          status: 503,
          detail: '503 service unavailable; not retried: the daemon is stopping (SIGTERM)',
          stopped: true,
        }),
      ),
    );
  });

  it("SIGTERM while the run waits for another writer's lock: stopped, not a failure of the service (no failure event)", async () => {
    // What acquireWriterLock throws when the stop ends its --lock-timeout wait.
    await stoppedWhile(() => new LockWaitStoppedError('/state/state.json.lock', 'held by pid 4711 on this host'));
  });

  it('SIGTERM stops the run in progress short of the wire: its stop fires at once, its deadline signal does not', async () => {
    const h = await harness();
    await h.daemon.idle();
    const gate = deferred<void>();
    let seen: { signal: AbortSignal; stop: AbortSignal } | undefined;
    h.sync = async (_d, o) => {
      seen = o;
      await gate.promise;
      return outcome({ dryRun: o.dryRun });
    };
    h.watcher.change();
    await waitFor(() => seen, 'the run');
    expect(seen!.stop.aborted).toBe(false);
    h.signals.emit('SIGTERM', 'SIGTERM');
    // At once, before the run ends: what it has queued is cancelled, what it sent finishes.
    expect(seen!.stop.aborted).toBe(true);
    expect((seen!.stop.reason as Error).message).toBe('the daemon is stopping (SIGTERM)');
    expect(seen!.signal.aborted).toBe(false);
    await settle();
    expect(h.log.lines.some((l) => l.msg === 'stopping: the run in progress sends nothing more; the requests it already sent finish')).toBe(true);
    gate.resolve();
    expect(await h.daemon.stopped).toEqual({ reason: 'SIGTERM', finished: true, forced: false });
  });

  it('gives up waiting after shutdownGraceMs', async () => {
    const h = await harness({ shutdownGraceMs: 3000 });
    await h.daemon.idle();
    h.sync = () => new Promise<SyncOutcome>(() => {});
    h.watcher.change();
    await settle();
    h.signals.emit('SIGINT', 'SIGINT');
    await h.timers.advance(2999);
    let result: unknown;
    void h.daemon.stopped.then((r) => (result = r));
    await settle();
    expect(result).toBeUndefined();
    await h.timers.advance(1);
    await waitFor(() => result, 'the stop');
    expect(result).toEqual({ reason: 'SIGINT', finished: false, forced: false });
  });

  it('a second signal asks to exit at once', async () => {
    const h = await harness();
    await h.daemon.idle();
    h.sync = () => new Promise<SyncOutcome>(() => {});
    h.watcher.change();
    await settle();
    h.signals.emit('SIGTERM', 'SIGTERM');
    await settle();
    h.signals.emit('SIGINT', 'SIGINT');
    expect(await h.daemon.stopped).toEqual({ reason: 'SIGINT', finished: false, forced: true });
    expect(h.log.lines.some((l) => l.msg === 'second signal: exiting now')).toBe(true);
    // Let the abandoned graceful stop run out, as process.exit would have cut it.
    await h.timers.advance(5000);
  });
});

describe('SIGHUP', () => {
  it('applies a new mode and schedule from the settings; bad settings keep the old ones', async () => {
    const h = await harness();
    await h.daemon.idle();
    h.reload = async () => ({ mode: 'observe', schedule: '*/2 * * * * *' });
    h.signals.emit('SIGHUP', 'SIGHUP');
    await h.daemon.idle();
    expect(h.calls.at(-1)!.dryRun).toBe(true);
    expect(h.scheduler.expressions).toEqual(['*/5 * * * *', '*/2 * * * * *']);
    h.reload = async () => {
      throw new InvalidInputError('invalid settings', [{ severity: 'error', code: 'invalid_type', message: 'bad', path: 'daemon.mode' }], 'settings_invalid');
    };
    h.signals.emit('SIGHUP', 'SIGHUP');
    await h.daemon.idle();
    expect(h.calls.at(-1)!.dryRun).toBe(true);
    expect((await h.scrape()).value('amsync_config_valid')).toBe(0);
    h.reload = async () => ({ mode: 'apply' });
    h.signals.emit('SIGHUP', 'SIGHUP');
    await h.daemon.idle();
    expect(h.calls.at(-1)!.dryRun).toBe(false);
    expect((await h.scrape()).value('amsync_config_valid')).toBe(1);
  });
});

describe('starting', () => {
  const base = {
    loadDesired: async () => ({ desired: desiredWith([]), watchFiles: [] }),
    sync: async () => outcome(),
    logger: logSink().logger,
    metrics: createMetrics({ version: 'test' }),
    signals: null,
  };
  const opts: DaemonOptions = { file: 'a.yaml', schedule: '* * * * *', listen: '127.0.0.1:0', mode: 'apply', debounceMs: 1, shutdownGraceMs: 1 };

  it('refuses a bad schedule, listen address or mode loudly', async () => {
    await expect(startDaemon({ ...base, options: { ...opts, schedule: 'every minute' } })).rejects.toThrow(/Expected `schedule` to be a cron expression/);
    await expect(startDaemon({ ...base, options: { ...opts, listen: 'localhost' } })).rejects.toThrow(DaemonError);
    await expect(startDaemon({ ...base, options: { ...opts, mode: 'yolo' as 'apply' } })).rejects.toThrow(/Expected `mode`/);
  });

  it('fails with daemon_listen when the address is taken', async () => {
    const first = await startDaemon({ ...base, options: opts, scheduler: new FakeScheduler().factory, watcher: new FakeWatcher().factory });
    running.push(first);
    const port = new URL(first.url).port;
    await expect(startDaemon({ ...base, options: { ...opts, listen: `127.0.0.1:${port}` }, scheduler: new FakeScheduler().factory, watcher: new FakeWatcher().factory })).rejects.toMatchObject({ code: 'daemon_listen' });
  });

  it('answers 404 and 405 where there is nothing', async () => {
    const d = await startDaemon({ ...base, options: opts, scheduler: new FakeScheduler().factory, watcher: new FakeWatcher().factory });
    running.push(d);
    expect((await fetch(`${d.url}/nope`)).status).toBe(404);
    expect((await fetch(`${d.url}/metrics`, { method: 'POST' })).status).toBe(405);
  });
});

describe('notifications: what the webhooks are told', () => {
  it('applied changes, drift in observe mode, and a failed change, each once per run', async () => {
    const h = await harness();
    h.sync = async (_d, o) => outcome({ dryRun: o.dryRun, changes: [{ kind: 'sshUser', action: 'create', key: 'alice-canary' }, { kind: 'apikey', action: 'delete', key: 'old' }], failed: ['old'] });
    h.daemon.trigger('file');
    await h.daemon.idle();
    const last = h.events.slice(-2);
    expect(last.map((e) => e.event)).toEqual(['changes_applied', 'failure']);
    expect(last[0]!.changes!.map((c) => c.key)).toEqual(['alice-canary']);
    expect(last[1]!.message).toBe('1 of 2 changes did not apply');
  });

  it('an invalid file is told once, not on every run while it stays invalid; the plan of the last good one is drift', async () => {
    const h = await harness({ mode: 'observe' });
    await h.daemon.idle();
    h.load = async () => {
      throw invalid();
    };
    h.sync = async (_d, o) => outcome({ dryRun: o.dryRun, changes: [{ kind: 'sshUser', action: 'create', key: 'alice-canary' }] });
    h.events.length = 0;
    h.watcher.change();
    await h.daemon.idle();
    h.scheduler.fire();
    await h.daemon.idle();
    expect(h.events.filter((e) => e.event === 'config_invalid')).toHaveLength(1);
    expect(h.events.filter((e) => e.event === 'drift_found')).toHaveLength(2);
  });

  it('a sync that throws is a failure, with its message', async () => {
    const h = await harness();
    await h.daemon.idle();
    h.sync = async () => {
      throw new AmsyncError('listing_incomplete', 'GET /api/sshusers: the listing is incomplete');
    };
    h.events.length = 0;
    h.scheduler.fire();
    await h.daemon.idle();
    expect(h.events).toEqual([{ event: 'failure', message: 'sync failed: GET /api/sshusers: the listing is incomplete' }]);
  });
});
