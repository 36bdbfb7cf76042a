import { afterEach, describe, expect, it } from 'vitest';
import { LeaseElector, type LeaseStore } from '../../../src/daemon/lease-elector.js';
import { startFleetDaemon, type RunningFleetDaemon } from '../../../src/daemon/index.js';
import { ownedTargets, type Target } from '../../../src/fleet/index.js';
import { createMetrics } from '../../../src/obs/metrics.js';
import { Secret } from '../../../src/secrets/index.js';
import { VirtualTime as FakeTimers, settle } from '../../helpers/virtual-time.js';
import { desiredWith, fakeSignals, FakeScheduler, FakeWatcher, logSink, outcome } from '../../helpers/daemon-fakes.js';
import { LeaseBackend } from '../../helpers/fake-lease-api.js';

/**
 * Sharding and HA (DESIGN.md §9): each shard's targets are guarded by a coordination.k8s.io/v1
 * Lease `<base>-shard-<I>`, so a restarted or duplicated pod of the same shard waits instead of
 * writing, and takes over once the holder is gone. Two fleet daemons of one shard against the
 * fake Lease API, on one virtual clock; the fake records every holder with the time it was
 * written, and every write to a target records who made it and when.
 */

const timings = { leaseDurationMs: 60_000, renewDeadlineMs: 50_000, retryPeriodMs: 10_000 };
const shard = { index: 1, count: 3 };
const allTargets: Target[] = Array.from({ length: 12 }, (_, i) => ({
  name: `site-${i}`,
  url: `https://site-${i}.example.com`,
  labels: {},
  credentials: { kind: 'token', token: new Secret(`t-${i}`) },
  overrides: {},
}));
const owned = ownedTargets(allTargets, shard);

interface Write {
  readonly who: string;
  readonly target: string;
  readonly at: number;
}

function cluster() {
  const timers = new FakeTimers();
  const backend = new LeaseBackend();
  /** Every accepted write to the Lease: who held it from then on, and when. */
  const holders: { holder: string; at: number }[] = [];
  const writes: Write[] = [];
  const calls: Write[] = [];
  const daemons: RunningFleetDaemon[] = [];
  const electors: LeaseElector[] = [];
  const recorded = (who: string): LeaseStore => {
    const store = backend.storeFor(who);
    const note = <T extends { holderIdentity?: string }>(r: T): T => {
      holders.push({ holder: r.holderIdentity ?? '', at: timers.now() });
      return r;
    };
    return { describe: 'lease:amsync/amsync-fleet-shard-1', get: store.get, create: async (r) => note(await store.create(r)), update: async (r) => note(await store.update(r)) };
  };

  async function pod(who: string) {
    const scheduler = new FakeScheduler();
    const ref: { daemon?: RunningFleetDaemon } = {};
    const elector = new LeaseElector({ store: recorded(who), identity: who, timers, ...timings, onChange: (leading) => leading && ref.daemon?.trigger('leader') });
    await elector.start();
    const daemon = await startFleetDaemon({
      loadFleet: async () => ({ targets: owned, desired: desiredWith(['deploy']), watchFiles: [] }),
      openTarget: (t) => ({
        sync: async (_d, o) => {
          calls.push({ who, target: t.name, at: timers.now() });
          if (!o.dryRun) writes.push({ who, target: t.name, at: timers.now() });
          return outcome({ dryRun: o.dryRun, changes: [{ kind: 'sshUser', action: 'create', key: 'deploy' }] });
        },
        close: () => undefined,
      }),
      mayWrite: () => elector.leading,
      logger: logSink().logger,
      metrics: createMetrics({ version: 'test' }),
      options: { file: 'access.yaml', targetsFile: 'targets.yaml', targetConcurrency: 4, schedule: '*/10 * * * * *', listen: '127.0.0.1:0', mode: 'apply', debounceMs: 0, shutdownGraceMs: 1000, shard },
      timers,
      random: () => 1,
      signals: fakeSignals(),
      scheduler: scheduler.factory,
      watcher: new FakeWatcher().factory,
    });
    ref.daemon = daemon;
    daemons.push(daemon);
    electors.push(elector);
    return { who, elector, daemon, scheduler };
  }

  /** The holder of the Lease at virtual time `at`, as the API server recorded it. */
  const holderAt = (at: number) => holders.filter((h) => h.at <= at).at(-1)?.holder;
  /** Advances the clock in steps, firing every pod's schedule at each. */
  async function run(ms: number, pods: { scheduler: FakeScheduler }[]) {
    for (let t = 0; t < ms; t += 10_000) {
      await timers.advance(10_000);
      for (const p of pods) p.scheduler.fire();
      await settle();
    }
  }
  return { timers, backend, holders, writes, calls, pod, holderAt, run, daemons, electors };
}

let stopAll: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stopAll?.();
  stopAll = undefined;
});

describe('two daemons of one shard: one writes, the other waits', () => {
  it('only the Lease holder writes; the other makes no call at all', async () => {
    const c = cluster();
    stopAll = async () => {
      for (const d of c.daemons) await d.stop();
    };
    const a = await c.pod('amsync-fleet-1');
    const b = await c.pod('amsync-fleet-1-duplicate');
    await c.run(120_000, [a, b]);
    expect(owned.length).toBeGreaterThan(0);
    expect(new Set(c.writes.map((w) => w.who))).toEqual(new Set(['amsync-fleet-1']));
    expect(c.calls.filter((w) => w.who === 'amsync-fleet-1-duplicate')).toEqual([]);
    expect(new Set(c.writes.map((w) => w.target))).toEqual(new Set(owned.map((t) => t.name)));
    expect(b.daemon.status()).toMatchObject({ ready: true, leading: false });
  });

  it('the holder killed (gone without releasing the Lease): the other takes over within the lease duration, never two writers at once', async () => {
    const c = cluster();
    const a = await c.pod('amsync-fleet-1');
    const b = await c.pod('amsync-fleet-1-restarted');
    stopAll = async () => {
      await b.daemon.stop();
    };
    await c.run(30_000, [a, b]);
    // Killed: no more runs, and no more calls to the API server (so no release either).
    c.backend.partitioned.add('amsync-fleet-1');
    await a.daemon.stop();
    const killedAt = c.timers.now();
    await c.run(120_000, [b]);
    const taken = c.writes.find((w) => w.who === 'amsync-fleet-1-restarted');
    expect(taken).toBeDefined();
    expect(taken!.at - killedAt).toBeLessThanOrEqual(timings.leaseDurationMs + timings.retryPeriodMs);
    for (const w of c.writes) expect(c.holderAt(w.at), `${w.who} wrote ${w.target} at ${w.at}`).toBe(w.who);
  });

  it('the holder cut off from the API server but still running: it stops writing before the other starts', async () => {
    const c = cluster();
    const a = await c.pod('amsync-fleet-1');
    const b = await c.pod('amsync-fleet-1-duplicate');
    stopAll = async () => {
      for (const d of c.daemons) await d.stop();
    };
    await c.run(30_000, [a, b]);
    c.backend.partitioned.add('amsync-fleet-1');
    await c.run(180_000, [a, b]);
    const lastOfA = Math.max(...c.writes.filter((w) => w.who === 'amsync-fleet-1').map((w) => w.at));
    const firstOfB = Math.min(...c.writes.filter((w) => w.who === 'amsync-fleet-1-duplicate').map((w) => w.at));
    expect(firstOfB).toBeGreaterThan(lastOfA);
    // The gap is the lease duration less the renew deadline, at least: never an overlap.
    expect(firstOfB - lastOfA).toBeGreaterThanOrEqual(timings.leaseDurationMs - timings.renewDeadlineMs - timings.retryPeriodMs);
    for (const w of c.writes) expect(c.holderAt(w.at)).toBe(w.who);
    expect(a.daemon.status().leading).toBe(false);
  });
});
