import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CredentialHandover } from '../../../src/api/index.js';
import { renderStatus } from '../../../src/daemon/index.js';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { sendCtlRequest, startFleetDaemon, type FleetDaemonOptions, type FleetInput, type RunningFleetDaemon } from '../../../src/daemon/index.js';
import { AmsyncError, InvalidInputError } from '../../../src/errors.js';
import type { Target } from '../../../src/fleet/index.js';
import type { DesiredState, NotifyEvent } from '../../../src/model/index.js';
import { createMetrics } from '../../../src/obs/metrics.js';
import { Secret } from '../../../src/secrets/index.js';
import type { SyncOutcome } from '../../../src/sync/run-sync.js';
import { deferred } from '../../helpers/daemon-deferred.js';
import { VirtualTime as FakeTimers, settle } from '../../helpers/virtual-time.js';
import { desiredWith, fakeSignals, FakeScheduler, FakeWatcher, logSink, outcome } from '../../helpers/daemon-fakes.js';
import { parseExposition } from '../../helpers/daemon-prom-parse.js';

/**
 * `amsync daemon --targets FILE` (DESIGN.md §9): every target reconciled on the schedule and on
 * changes of either file, each in a loop of its own; /readyz lists every target; metrics are
 * labelled by target; a stuck target is abandoned at its deadline while the others go on.
 * Virtual time, fake watcher and scheduler, fake services: no real timer is raced.
 */

const target = (name: string, labels: Record<string, string> = {}): Target => ({
  name,
  url: `https://${name}.example.com`,
  labels,
  credentials: { kind: 'token', token: new Secret(`token-of-${name}`) },
  overrides: {},
});

type SyncFn = (desired: DesiredState, o: { dryRun: boolean; signal: AbortSignal }) => Promise<SyncOutcome>;

interface Call {
  readonly target: string;
  readonly users: string[];
  readonly dryRun: boolean;
}

async function harness(options: Partial<FleetDaemonOptions> = {}) {
  const timers = new FakeTimers();
  const scheduler = new FakeScheduler();
  const watcher = new FakeWatcher();
  const log = logSink();
  const metrics = createMetrics({ version: 'test' });
  const calls: Call[] = [];
  const opened: string[] = [];
  const closed: string[] = [];
  /** Each open with the credential handed to it (a reopen's, from the service it replaces). */
  const handedIn: [string, unknown][] = [];
  const events: NotifyEvent[] = [];
  const h = {
    events,
    timers,
    scheduler,
    watcher,
    log,
    calls,
    opened,
    closed,
    handedIn,
    leading: true,
    input: { targets: [target('sp-1', { site: 'sp' }), target('sp-2', { site: 'sp' }), target('rj-1', { site: 'rj' })], desired: desiredWith(['deploy']), watchFiles: ['access.yaml', 'targets.yaml'] } as FleetInput,
    load: undefined as undefined | (() => Promise<FleetInput>),
    sync: {} as Record<string, SyncFn>,
    /** A target's integrator-key write-back, as its client reports it. */
    writeBack: {} as Record<string, { ok: boolean; error?: string }>,
    daemon: undefined as unknown as RunningFleetDaemon,
    async get(path: string) {
      const res = await fetch(`${h.daemon.url}${path}`);
      return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
    },
    async readyz() {
      const r = await h.get('/readyz');
      return { status: r.status, type: r.type, body: JSON.parse(r.text) as { ready: boolean; reason: string; targets: { name: string; ready: boolean; attempted: boolean; lastOutcome: string | null; reason: string }[] } };
    },
    async scrape() {
      return parseExposition((await h.get('/metrics')).text);
    },
  };
  h.daemon = await startFleetDaemon({
    loadFleet: async () => (h.load ? h.load() : h.input),
    openTarget: (t, credentialFrom) => {
      opened.push(t.name);
      handedIn.push([t.name, credentialFrom]);
      const handOvers = opened.length;
      return {
        // Stands for the integrator key as this service holds it (a rotated key in memory only).
        handOverCredential: async () => ({ heldBy: `${t.name}#${handOvers}` }) as unknown as CredentialHandover,
        sync: (desired, o) => {
          calls.push({ target: t.name, users: desired.sshUsers.map((u) => u.username), dryRun: o.dryRun });
          return (h.sync[t.name] ?? (async (_d, so) => outcome({ dryRun: so.dryRun })))(desired, o);
        },
        close: () => closed.push(t.name),
        credentialStatus: () => (h.writeBack[t.name] === undefined ? undefined : { writeBack: h.writeBack[t.name]! }),
      };
    },
    mayWrite: () => h.leading,
    notify: (event) => events.push(event),
    logger: log.logger,
    metrics,
    options: {
      file: 'access.yaml',
      targetsFile: 'targets.yaml',
      targetConcurrency: 8,
      schedule: '*/5 * * * *',
      listen: '127.0.0.1:0',
      mode: 'apply',
      debounceMs: 100,
      shutdownGraceMs: 5000,
      ...options,
    },
    timers,
    random: () => 1,
    signals: fakeSignals(),
    scheduler: scheduler.factory,
    watcher: watcher.factory,
  });
  running.push(h.daemon);
  return h;
}

const running: RunningFleetDaemon[] = [];
afterEach(async () => {
  for (const d of running.splice(0)) await d.stop();
});

describe('every target is reconciled at start, on a change of either file, and on the schedule', () => {
  it('runs each target once at start with its part of the file; watches both files', async () => {
    const h = await harness();
    h.input = { ...h.input, desired: { ...desiredWith(['deploy', 'sp-only']), sshUsers: [...desiredWith(['deploy']).sshUsers, { ...desiredWith(['sp-only']).sshUsers[0]!, targets: { labels: { site: 'sp' } } }] } };
    h.daemon.trigger('file');
    await h.daemon.idle();
    const last = (name: string) => h.calls.filter((c) => c.target === name).at(-1);
    expect(last('sp-1')).toEqual({ target: 'sp-1', users: ['deploy', 'sp-only'], dryRun: false });
    expect(last('rj-1')).toEqual({ target: 'rj-1', users: ['deploy'], dryRun: false });
    expect(h.watcher.files).toEqual(['access.yaml', 'targets.yaml', 'access.yaml', 'targets.yaml']);
    expect(h.opened).toEqual(['sp-1', 'sp-2', 'rj-1']);
  });

  it('a file change or the schedule runs every target again; a target keeps its service between runs', async () => {
    const h = await harness();
    await h.daemon.idle();
    h.watcher.change(['targets.yaml']);
    await h.daemon.idle();
    h.scheduler.fire();
    await h.daemon.idle();
    expect(h.calls.filter((c) => c.target === 'sp-2')).toHaveLength(3);
    expect(h.opened).toEqual(['sp-1', 'sp-2', 'rj-1']);
  });

  it('the targets file changing adds, removes and reopens targets', async () => {
    const h = await harness();
    await h.daemon.idle();
    h.input = { ...h.input, targets: [target('sp-1', { site: 'sp' }), { ...target('sp-2'), url: 'https://sp-2-new.example.com' }, target('new-1')] };
    h.watcher.change(['targets.yaml']);
    await h.daemon.idle();
    expect(h.closed.sort()).toEqual(['rj-1', 'sp-2']);
    expect(h.opened).toEqual(['sp-1', 'sp-2', 'rj-1', 'sp-2', 'new-1']);
    expect(h.daemon.status().targets.map((t) => t.name)).toEqual(['sp-1', 'sp-2', 'new-1']);
    const e = await h.scrape();
    expect(e.value('amsync_fleet_targets')).toBe(3);
    expect(e.value('amsync_target_ready', { target: 'rj-1' })).toBeUndefined();
    expect(e.value('amsync_target_ready', { target: 'new-1' })).toBe(1);
  });

  it('a reopened target takes over the integrator key its old service held (a rotated key may be in memory only); new targets start afresh', async () => {
    const h = await harness();
    await h.daemon.idle();
    h.input = { ...h.input, targets: [target('sp-1', { site: 'sp' }), { ...target('sp-2'), url: 'https://sp-2-new.example.com' }, target('new-1')] };
    h.watcher.change(['targets.yaml']);
    await h.daemon.idle();
    expect(h.handedIn).toEqual([
      ['sp-1', undefined],
      ['sp-2', undefined],
      ['rj-1', undefined],
      ['sp-2', { heldBy: 'sp-2#2' }],
      ['new-1', undefined],
    ]);
  });

  it('an invalid file keeps the last good version: targets are planned, nothing applied, the findings logged once', async () => {
    const h = await harness();
    await h.daemon.idle();
    h.load = async () => {
      throw new InvalidInputError('targets.yaml is not a valid targets file (1 error); nothing was sent', [{ severity: 'error', code: 'unknown_key', message: "unknown key 'lables'", path: 'targets[0].lables', position: { file: 'targets.yaml', line: 5, col: 5 } }], 'targets_invalid');
    };
    h.calls.length = 0;
    h.watcher.change(['targets.yaml']);
    await h.daemon.idle();
    expect(h.calls.map((c) => [c.target, c.dryRun])).toEqual([
      ['sp-1', true],
      ['sp-2', true],
      ['rj-1', true],
    ]);
    expect(h.log.lines.filter((l) => String(l.msg).includes("unknown key 'lables'"))).toHaveLength(1);
    expect((await h.scrape()).value('amsync_config_valid')).toBe(0);
    expect((await h.readyz()).body).toMatchObject({ ready: true, configValid: false });
  });
});

describe('notifications: each target\'s events, named after it', () => {
  it('a target whose change failed is a failure of that target; the others report what they applied', async () => {
    const h = await harness();
    await h.daemon.idle();
    h.events.length = 0;
    h.sync['sp-2'] = async (_d, o) => outcome({ dryRun: o.dryRun, changes: [{ kind: 'sshUser', action: 'create', key: 'deploy' }], failed: ['deploy'] });
    h.sync['rj-1'] = async (_d, o) => outcome({ dryRun: o.dryRun, changes: [{ kind: 'sshUser', action: 'create', key: 'deploy' }] });
    h.scheduler.fire();
    await h.daemon.idle();
    expect(h.events.map((e) => `${e.event} ${String(e.target)}`).sort()).toEqual(['changes_applied rj-1', 'failure sp-2']);
  });
});

describe('/readyz: ready once every target has had a run; a failing target is listed but does not make the fleet unready', () => {
  it('answers JSON listing every target', async () => {
    const h = await harness();
    h.sync['rj-1'] = async () => {
      throw new AmsyncError('listing_incomplete', 'nothing listens at https://rj-1.example.com');
    };
    await h.daemon.idle();
    const r = await h.readyz();
    expect(r.status).toBe(200);
    expect(r.type).toContain('application/json');
    expect(r.body.ready).toBe(true);
    expect(r.body.reason).toBe('ok (1 of 3 targets not ready: rj-1)');
    expect(r.body.targets.map((t) => [t.name, t.ready, t.attempted, t.lastOutcome])).toEqual([
      ['sp-1', true, true, 'success'],
      ['sp-2', true, true, 'success'],
      ['rj-1', false, true, 'failure'],
    ]);
    const e = await h.scrape();
    expect(e.value('amsync_ready')).toBe(1);
    expect(e.value('amsync_target_sync_runs_total', { target: 'rj-1', outcome: 'failure' })).toBe(1);
    expect(e.value('amsync_target_sync_runs_total', { target: 'sp-1', outcome: 'success' })).toBe(1);
    expect(e.value('amsync_sync_runs_total', { outcome: 'success' })).toBe(2);
    // The failing one retries with its own backoff; the others are not run again.
    await h.timers.advance(5_000);
    await h.daemon.idle();
    expect(h.calls.map((c) => c.target)).toEqual(['sp-1', 'sp-2', 'rj-1', 'rj-1']);
  });

  // Issue 27, finding 4: a target whose rotated integrator key is not on disk is locked out at a restart.
  it('a target whose rotated integrator key could not be written back is listed as not ready, saying why', async () => {
    const h = await harness();
    h.writeBack['rj-1'] = { ok: false, error: 'EROFS' };
    await h.daemon.idle();
    const r = await h.readyz();
    expect(r.body.reason).toBe('ok (1 of 3 targets not ready: rj-1)');
    const rj = r.body.targets.find((t) => t.name === 'rj-1')!;
    expect(rj).toMatchObject({ ready: false, lastOutcome: 'success' });
    expect(rj.reason).toMatch(/^integrator_key_not_persisted: .*\(EROFS\)/);
    h.writeBack['rj-1'] = { ok: true };
    expect((await h.readyz()).body.reason).toBe('ok (3 targets)');
  });

  it('not ready until every target has completed a run attempt', async () => {
    const h = await harness();
    const gate = deferred<SyncOutcome>();
    h.sync['sp-2'] = () => gate.promise;
    await settle();
    const r = await h.readyz();
    expect(r.status).toBe(503);
    expect(r.body.reason).toBe('waiting for the first run of 1 of 3 targets');
    gate.resolve(outcome());
    await h.daemon.idle();
    expect((await h.readyz()).status).toBe(200);
  });

  it('a standby (another replica holds the shard\'s Lease) runs nothing and says so', async () => {
    const h = await harness({ shard: { index: 1, count: 3 } });
    await h.daemon.idle();
    h.calls.length = 0;
    h.leading = false;
    h.scheduler.fire();
    await h.daemon.idle();
    expect(h.calls).toEqual([]);
    const r = await h.readyz();
    expect(r.body).toMatchObject({ ready: true, leading: false, shard: { index: 1, count: 3 } });
    expect(r.body.reason).toMatch(/^standby/);
  });
});

describe('a stuck target is abandoned at the run deadline without delaying the others', () => {
  it('the others complete at once; the stuck one is abandoned at its deadline and retried', async () => {
    const deadline = 60_000;
    const h = await harness({ runDeadlineMs: deadline, targetConcurrency: 2 });
    let aborted = false;
    h.sync['sp-1'] = (_d, o) =>
      new Promise((_resolve, reject) => {
        o.signal.addEventListener('abort', () => {
          aborted = true;
          reject(new Error('aborted'));
        });
      });
    await settle();
    await h.timers.advance(1);
    // With two slots and sp-1 holding one, sp-2 and rj-1 have run in the other, before any deadline.
    expect(h.calls.map((c) => c.target)).toEqual(['sp-1', 'sp-2', 'rj-1']);
    expect(h.daemon.status().targets.map((t) => [t.name, t.attempted])).toEqual([
      ['sp-1', false],
      ['sp-2', true],
      ['rj-1', true],
    ]);
    await h.timers.advance(deadline);
    await settle();
    expect(aborted).toBe(true);
    const st = h.daemon.status().targets[0]!;
    expect(st).toMatchObject({ name: 'sp-1', attempted: true, ready: false });
    expect(st.reason).toContain('passed its deadline');
    const e = await h.scrape();
    expect(e.value('amsync_target_sync_runs_abandoned_total', { target: 'sp-1' })).toBe(1);
    expect(e.value('amsync_target_sync_runs_abandoned_total', { target: 'sp-2' })).toBe(0);
    expect((await h.readyz()).body.ready).toBe(true);
  });
});

// Issue 29 item 7 for a targets file: /readyz says what holds writes, and `ctl status` gives each target's last run.
describe('a fleet suspended or inside a sync window', () => {
  const dirs: string[] = [];
  const socketIn = () => {
    dirs.push(mkdtempSync(join(tmpdir(), 'amsync-fleet-ctl-')));
    return join(dirs.at(-1)!, 'ctl.sock');
  };
  afterAll(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('/readyz stays ready and says "suspended: REASON since T" (reason and writesHeld); resumed, it says so no more', async () => {
    const socket = socketIn();
    const h = await harness({ socket });
    await h.daemon.idle();
    const suspended = await sendCtlRequest(socket, { op: 'suspend', reason: 'change freeze INC-9', uid: 1000 });
    expect(suspended).toMatchObject({ ok: true, message: 'suspended: change freeze INC-9 since 2025-01-01T00:00:00.000Z' });
    const r = await h.readyz();
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ready: true, reason: 'ok (suspended: change freeze INC-9 since 2025-01-01T00:00:00.000Z)', writesHeld: 'suspended: change freeze INC-9 since 2025-01-01T00:00:00.000Z' });
    // Suspended, every target's run observes.
    h.calls.length = 0;
    h.daemon.trigger('file');
    await h.daemon.idle();
    expect(h.calls.map((c) => [c.target, c.dryRun])).toEqual([
      ['sp-1', true],
      ['sp-2', true],
      ['rj-1', true],
    ]);
    await sendCtlRequest(socket, { op: 'resume', uid: 1000 });
    await h.daemon.idle();
    const after = await h.readyz();
    expect(after.body.reason).toBe('ok (3 targets)');
    expect(after.body).not.toHaveProperty('writesHeld');
  });

  it('/readyz says a closed window holds writes', async () => {
    const h = await harness({ windows: [{ kind: 'deny', schedule: '0 0 * * *', duration: '2h' }] });
    await h.daemon.idle();
    expect(h.calls.every((c) => c.dryRun)).toBe(true);
    expect((await h.readyz()).body).toMatchObject({
      ready: true,
      reason: 'ok (sync window: inside a deny window ("0 0 * * *" UTC) until 2025-01-01T02:00:00.000Z)',
      writesHeld: 'sync window: inside a deny window ("0 0 * * *" UTC) until 2025-01-01T02:00:00.000Z',
    });
  });

  it('ctl status gives the last run of each target, as JSON and as text', async () => {
    const socket = socketIn();
    const h = await harness({ socket });
    h.sync['rj-1'] = async () => {
      throw new AmsyncError('listing_incomplete', 'nothing listens at https://rj-1.example.com');
    };
    await h.daemon.idle();
    const answer = await sendCtlRequest(socket, { op: 'status', uid: 1000 });
    if (!answer.ok) throw new Error(answer.error);
    expect(answer.status.targets).toEqual([
      { name: 'sp-1', outcome: 'success', lastSuccessAt: '2025-01-01T00:00:00.000Z', lastError: null, running: false },
      { name: 'sp-2', outcome: 'success', lastSuccessAt: '2025-01-01T00:00:00.000Z', lastError: null, running: false },
      { name: 'rj-1', outcome: 'failure', lastSuccessAt: null, lastError: expect.stringContaining('listing_incomplete'), running: false },
    ]);
    const text = renderStatus(answer.status).split('\n');
    expect(text.slice(4, 8)).toEqual([
      'last run:   3 targets',
      '  sp-1: success, last success 2025-01-01T00:00:00.000Z',
      '  sp-2: success, last success 2025-01-01T00:00:00.000Z',
      `  rj-1: failure, last error ${answer.status.targets![2]!.lastError!}`,
    ]);
  });
});

// Issue 30, item 5: expiries of one target never wait for another. A target whose service
// hangs holds its slot until its run deadline; another target's expiry, due meanwhile, runs at
// once even when every slot is taken (targetConcurrency 1 here): its run does not queue behind
// the hung one.
describe('an expiry of one target does not wait for another target that hangs', () => {
  it("sp-2's expired user is planned and deleted at its expiry while sp-1's run is still held, with every slot taken", async () => {
    const h = await harness({ targetConcurrency: 1, runDeadlineMs: 3_600_000 });
    const start = h.timers.wallNow();
    const expiresAt = new Date(start + 10 * 60_000).toISOString();
    const withExpiry = (dryRun: boolean): SyncOutcome => {
      const base = outcome({ dryRun });
      return { ...base, plan: { ...base.plan, expiries: [{ kind: 'sshUser', key: 'contractor', id: 7, expiresAt, remainingSeconds: 600 }] } };
    };
    // sp-2's runs: the contractor expires in 10 minutes; once past it, its run deletes it.
    const deletedAt: number[] = [];
    h.sync['sp-2'] = async (_d, o) => {
      if (deletedAt.length > 0) return outcome({ dryRun: o.dryRun }); // gone: nothing more to do
      if (h.timers.wallNow() >= Date.parse(expiresAt)) {
        deletedAt.push(h.timers.wallNow());
        return outcome({ dryRun: o.dryRun, changes: [{ kind: 'sshUser', key: 'contractor', action: 'delete' }] });
      }
      return withExpiry(o.dryRun);
    };
    await settle();
    await h.timers.advance(1);
    expect(h.calls.map((c) => c.target)).toEqual(['sp-1', 'sp-2', 'rj-1']);

    // sp-1's service hangs from now on: its scheduled run holds the only slot until its deadline.
    let held = true;
    h.sync['sp-1'] = (_d, o) =>
      new Promise((_resolve, reject) => {
        o.signal.addEventListener('abort', () => {
          held = false;
          reject(new Error('aborted'));
        });
      });
    h.calls.length = 0;
    h.scheduler.fire();
    await settle();
    await h.timers.advance(1);
    expect(h.calls.map((c) => c.target)).toEqual(['sp-1']); // sp-2 and rj-1 wait for the slot

    // The expiry is due: sp-2 runs now, sp-1 still hung.
    await h.timers.advance(10 * 60_000);
    await settle();
    expect(held).toBe(true);
    expect(deletedAt).toHaveLength(1);
    expect(deletedAt[0]! - Date.parse(expiresAt)).toBeLessThan(60_000);
    expect(h.calls.filter((c) => c.target === 'sp-2').length).toBeGreaterThanOrEqual(1);
    expect(h.log.lines.some((l) => l.msg === 'an expiry or a key rotation is due: run' && l.target === 'sp-2')).toBe(true);
    // sp-1 is abandoned at its deadline (its service answers again for the retry), and the slot
    // goes round again: nothing was leaked.
    h.sync['sp-1'] = async (_d, o) => outcome({ dryRun: o.dryRun });
    await h.timers.advance(3_600_000);
    await settle();
    expect(held).toBe(false);
    expect(h.daemon.status().targets.map((t) => [t.name, t.attempted])).toEqual([
      ['sp-1', true],
      ['sp-2', true],
      ['rj-1', true],
    ]);
  });
});
