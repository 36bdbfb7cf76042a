import { afterEach, describe, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from '../../../src/daemon/index.js';
import { ExpiryWatch, expiringWindowMs } from '../../../src/daemon/expiry-watch.js';
import type { NotifyEvent, Plan, PlannedExpiry } from '../../../src/model/index.js';
import { createMetrics } from '../../../src/obs/metrics.js';
import { desiredWith, FakeScheduler, FakeWatcher, logSink, outcome } from '../../helpers/daemon-fakes.js';
import { parseExposition } from '../../helpers/daemon-prom-parse.js';
import { VirtualTime } from '../../helpers/virtual-time.js';

/**
 * The daemon's expiry timer (issue 30): a run is asked for at the next expiry and 24 hours
 * before it (for `access_expiring`), on the daemon's clock; `access_expiring` is told once per
 * item and expiry.
 */

const HOUR = 3_600_000;
const T0 = Date.UTC(2025, 0, 1);
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
const expiry = (key: string, at: number, now = T0): PlannedExpiry => ({ kind: 'sshUser', key, id: 1, expiresAt: iso(at), remainingSeconds: Math.floor((at - now) / 1000) });
const planWith = (expiries: PlannedExpiry[]): Plan => ({ changes: [], unchanged: 0, unmanaged: [], protected: [], problems: [], notes: [], ...(expiries.length ? { expiries } : {}) });

describe('ExpiryWatch', () => {
  it('alsoWakeAt: a rotation or an overlap end wakes the daemon when it comes before the expiries', () => {
    const watch = new ExpiryWatch();
    watch.observe(planWith([expiry('a', T0 + 48 * HOUR)]), T0, null);
    watch.alsoWakeAt(T0 + HOUR);
    expect(watch.wakeAt).toBe(T0 + HOUR);
    watch.alsoWakeAt(T0 + 30 * HOUR);
    expect(watch.wakeAt).toBe(T0 + HOUR);
    watch.observe(planWith([]), T0, null);
    watch.alsoWakeAt(undefined);
    expect(watch.wakeAt).toBeUndefined();
    watch.alsoWakeAt(T0 + 5);
    expect(watch.wakeAt).toBe(T0 + 5);
  });

  it('wakes 24 h before the next expiry, then at it; the gauges are the earliest expiry and those within 24 h', () => {
    const watch = new ExpiryWatch();
    const far = planWith([expiry('a', T0 + 48 * HOUR), expiry('b', T0 + 72 * HOUR)]);
    const first = watch.observe(far, T0, null);
    expect(first).toEqual({ next: T0 + 48 * HOUR, soon: 0, events: [] });
    expect(watch.wakeAt).toBe(T0 + 24 * HOUR);

    // At the warning time of `a`: told, and the next wake is its expiry (b's warning comes later).
    const warned = watch.observe(far, T0 + 24 * HOUR, 'prod');
    expect(warned.soon).toBe(1);
    expect(warned.events).toEqual([
      { event: 'access_expiring', target: 'prod', summary: { expiring: 1 }, changes: [{ kind: 'sshUser', action: 'delete', key: 'a' }], message: `sshUser a expires at ${iso(T0 + 48 * HOUR)}` },
    ]);
    expect(watch.wakeAt).toBe(T0 + 48 * HOUR);

    // No expiry left: no wake-up, gauges at none.
    expect(watch.observe(planWith([]), T0 + 49 * HOUR, null)).toEqual({ next: undefined, soon: 0, events: [] });
    expect(watch.wakeAt).toBeUndefined();
  });

  it('an expiry already within 24 h wakes at the expiry itself', () => {
    const watch = new ExpiryWatch();
    watch.observe(planWith([expiry('a', T0 + 5_000)]), T0, null);
    expect(watch.wakeAt).toBe(T0 + 5_000);
  });

  it('tells access_expiring once per item and expiry: again only when the expiry changes', () => {
    const watch = new ExpiryWatch();
    const soon = planWith([expiry('a', T0 + HOUR), expiry('b', T0 + 2 * HOUR)]);
    expect(watch.observe(soon, T0, null).events.flatMap((e) => e.changes!.map((c) => c.key))).toEqual(['a', 'b']);
    // Later runs (the schedule, an edit) before the expiry: nothing more.
    expect(watch.observe(soon, T0 + 60_000, null).events).toEqual([]);
    expect(watch.observe(soon, T0 + 120_000, null).events).toEqual([]);
    // b's expiry moved (an edit): told again, for b only.
    const moved = planWith([expiry('a', T0 + HOUR), expiry('b', T0 + 3 * HOUR)]);
    const again = watch.observe(moved, T0 + 180_000, null).events;
    expect(again.flatMap((e) => e.changes!.map((c) => c.key))).toEqual(['b']);
    expect(again[0]!.summary).toEqual({ expiring: 1 });
  });

  it('the window is 24 hours', () => {
    expect(expiringWindowMs).toBe(24 * HOUR);
  });
});

describe('the daemon arms its expiry timer from each run', () => {
  const running: RunningDaemon[] = [];
  afterEach(async () => {
    for (const d of running.splice(0)) await d.stop();
  });

  it('runs 24 h before an expiry and at it, with the reason expiry, never on the schedule (which does not fire)', async () => {
    const time = new VirtualTime();
    const log = logSink('debug'); // a run's start ('sync started') is a debug line
    const metrics = createMetrics({ version: 'test' });
    const events: NotifyEvent[] = [];
    const runsAt: { at: number; now: number }[] = [];
    const expiresAt = T0 + 48 * HOUR;
    const d = await startDaemon({
      loadDesired: async () => ({ desired: desiredWith(['contractor']), watchFiles: ['access.yaml'] }),
      sync: async (_desired, o) => {
        const now = o.now!();
        runsAt.push({ at: time.wallNow(), now });
        const base = outcome({ dryRun: o.dryRun });
        return { ...base, plan: now < expiresAt ? planWith([expiry('contractor', expiresAt, now)]) : base.plan };
      },
      logger: log.logger,
      metrics,
      options: { file: 'access.yaml', schedule: '0 0 1 1 *', listen: '127.0.0.1:0', mode: 'apply', debounceMs: 0, shutdownGraceMs: 5_000 },
      timers: time,
      signals: null,
      scheduler: new FakeScheduler().factory,
      watcher: new FakeWatcher().factory,
      notify: (event) => events.push(event),
    });
    running.push(d);
    await d.idle();
    expect(runsAt).toEqual([{ at: T0, now: T0 }]);
    const gauges = async () => {
      const e = parseExposition((await metrics.render()).body);
      return [e.value('amsync_next_expiry_timestamp_seconds'), e.value('amsync_items_expiring')];
    };
    expect(await gauges()).toEqual([expiresAt / 1000, 0]);
    expect(time.pendingDelays()).toContain(24 * HOUR);

    await time.advance(24 * HOUR);
    await d.idle();
    expect(runsAt.map((r) => r.at)).toEqual([T0, T0 + 24 * HOUR]);
    expect(events.filter((e) => e.event === 'access_expiring')).toHaveLength(1);
    expect(await gauges()).toEqual([expiresAt / 1000, 1]);

    await time.advance(24 * HOUR);
    await d.idle();
    expect(runsAt.map((r) => r.at)).toEqual([T0, T0 + 24 * HOUR, expiresAt]);
    const started = log.lines.filter((l) => l.msg === 'sync started').map((l) => l.reasons);
    expect(started.slice(1)).toEqual([['expiry'], ['expiry']]);
    // Nothing left to expire: no timer asks for another run, access_expiring was told once.
    expect(await gauges()).toEqual([0, 0]);
    await time.advance(7 * 24 * HOUR);
    await d.idle();
    expect(runsAt).toHaveLength(3);
    expect(events.filter((e) => e.event === 'access_expiring')).toHaveLength(1);
  });
});
