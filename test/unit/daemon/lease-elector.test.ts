import { describe, expect, it } from 'vitest';
import { kubeLeaseStore } from '../../../src/daemon/kube-lease-store.js';
import { parseLeaseRef } from '../../../src/settings/lease-ref.js';
import { LeaseConflictError, LeaseElector } from '../../../src/daemon/lease-elector.js';
import { VirtualTime } from '../../helpers/virtual-time.js';
import { LeaseBackend, startLeaseApi } from '../../helpers/fake-lease-api.js';
import { createClient } from '../../../src/api/index.js';
import { startEmulator } from '../../../src/emulator/index.js';
import { Secret } from '../../../src/secrets/secret.js';

const timings = { leaseDurationMs: 60_000, renewDeadlineMs: 50_000, retryPeriodMs: 10_000 };

/** Replicas on one virtual clock, with a log of who believed it led, and when. */
function replicas(backend: LeaseBackend, timers: VirtualTime, names: string[]) {
  const spans: { who: string; from: number; to?: number }[] = [];
  const electors = names.map(
    (who) =>
      new LeaseElector({
        store: backend.storeFor(who),
        identity: who,
        timers,
        ...timings,
        onChange: (leading) => {
          if (leading) spans.push({ who, from: timers.now() });
          else spans.filter((s) => s.who === who && s.to === undefined).forEach((s) => (s.to = timers.now()));
        },
      }),
  );
  /** No two replicas believed they led at the same moment. */
  const neverTwo = () => {
    for (const a of spans) for (const b of spans) if (a !== b && a.who !== b.who) expect(a.from >= (b.to ?? Infinity) || b.from >= (a.to ?? Infinity)).toBe(true);
  };
  return { electors, spans, neverTwo };
}

describe('leader election on a coordination.k8s.io/v1 Lease', () => {
  it('one replica leads; the other observes while the leader renews', async () => {
    const backend = new LeaseBackend();
    const timers = new VirtualTime();
    const { electors: [a, b], neverTwo } = replicas(backend, timers, ['pod-a', 'pod-b']);
    await a!.start();
    await b!.start();
    await timers.advance(5 * 60_000);
    expect(a!.leading).toBe(true);
    expect(b!.leading).toBe(false);
    expect(a!.term.aborted).toBe(false);
    expect(new Set(backend.history.map((h) => h.holder))).toEqual(new Set(['pod-a']));
    neverTwo();
  });

  it('a leader cut off from the API server steps down (its writes stop) before another takes over', async () => {
    const backend = new LeaseBackend();
    const timers = new VirtualTime();
    const { electors: [a, b], spans, neverTwo } = replicas(backend, timers, ['pod-a', 'pod-b']);
    a!.start();
    await timers.advance(1);
    b!.start();
    await timers.advance(30_000);
    const term = a!.term;
    backend.partitioned.add('pod-a');
    await timers.advance(3 * 60_000);
    expect(term.aborted).toBe(true);
    expect(String((term.reason as Error).message)).toContain('leadership lost');
    expect(b!.leading).toBe(true);
    const lostAt = spans.find((s) => s.who === 'pod-a')!.to!;
    const wonAt = spans.find((s) => s.who === 'pod-b')!.from;
    // The lease duration exceeds the renew deadline: a gap, never an overlap.
    expect(wonAt - lostAt).toBeGreaterThanOrEqual(timings.leaseDurationMs - timings.renewDeadlineMs - timings.retryPeriodMs);
    neverTwo();
  });

  it('a leader whose calls to the API server hang (packets dropped, not refused) still steps down before another takes over', async () => {
    const backend = new LeaseBackend();
    const timers = new VirtualTime();
    let hang = false;
    const a = backend.storeFor('pod-a');
    const hanging = { describe: a.describe, get: () => (hang ? new Promise<never>(() => {}) : a.get()), create: a.create, update: (r: Parameters<typeof a.update>[0]) => (hang ? new Promise<never>(() => {}) : a.update(r)) };
    const spans: { who: string; from: number; to?: number }[] = [];
    const make = (who: string, store: typeof a) =>
      new LeaseElector({
        store,
        identity: who,
        timers,
        ...timings,
        onChange: (leading) => {
          if (leading) spans.push({ who, from: timers.now() });
          else spans.filter((x) => x.who === who && x.to === undefined).forEach((x) => (x.to = timers.now()));
        },
      });
    const ea = make('pod-a', hanging);
    const eb = make('pod-b', backend.storeFor('pod-b'));
    await ea.start();
    await eb.start();
    await timers.advance(25_000);
    const term = ea.term;
    hang = true;
    await timers.advance(3 * 60_000);
    expect(term.aborted).toBe(true);
    expect(eb.leading).toBe(true);
    const lostAt = spans.find((x) => x.who === 'pod-a')!.to!;
    const wonAt = spans.find((x) => x.who === 'pod-b')!.from;
    expect(wonAt).toBeGreaterThan(lostAt);
    // Its calls answer again: it sees pod-b's claim and stays a follower.
    hang = false;
    await timers.advance(60_000);
    expect(ea.leading).toBe(false);
    expect(eb.leading).toBe(true);
  });

  it('takeover after the holder is gone happens within the lease duration plus one retry period', async () => {
    const backend = new LeaseBackend();
    const timers = new VirtualTime();
    const { electors: [a, b], spans } = replicas(backend, timers, ['pod-a', 'pod-b']);
    a!.start();
    await timers.advance(1);
    b!.start();
    await timers.advance(20_000);
    backend.partitioned.add('pod-a'); // the node is lost: no more renewals
    const goneAt = timers.now();
    await timers.advance(2 * 60_000);
    const wonAt = spans.find((s) => s.who === 'pod-b')!.from;
    expect(wonAt - goneAt).toBeLessThanOrEqual(timings.leaseDurationMs + 2 * timings.retryPeriodMs);
  });

  it('a leader that stops releases the Lease, and the next replica takes it at its next attempt', async () => {
    const backend = new LeaseBackend();
    const timers = new VirtualTime();
    const { electors: [a, b], neverTwo } = replicas(backend, timers, ['pod-a', 'pod-b']);
    a!.start();
    await timers.advance(1);
    b!.start();
    await timers.advance(1);
    await a!.stop();
    expect(a!.term.aborted).toBe(true);
    await timers.advance(timings.retryPeriodMs + 1);
    expect(b!.leading).toBe(true);
    neverTwo();
  });

  it('two replicas racing for a free Lease: the resourceVersion check lets exactly one win', async () => {
    const backend = new LeaseBackend();
    backend.create({ holderIdentity: '', leaseDurationSeconds: 60 });
    const timers = new VirtualTime();
    const { electors } = replicas(backend, timers, ['pod-a', 'pod-b', 'pod-c']);
    await Promise.all(electors.map((e) => e.tick()));
    expect(electors.filter((e) => e.leading)).toHaveLength(1);
  });

  it('rejects timings where a leader could outlive its lease', () => {
    expect(() => new LeaseElector({ store: new LeaseBackend().storeFor('x'), identity: 'x', timers: new VirtualTime(), leaseDurationMs: 10_000, renewDeadlineMs: 10_000 })).toThrow(/must be below/);
  });
});

describe('a paused leader (SIGSTOP, a VM pause, a frozen container, a long GC)', () => {
  it('sends none of the writes it had queued once it resumes past its renew deadline: the other replica took over, and the service received nothing more from it', async () => {
    // Two processes, two monotonic clocks. pod-a is paused for 70 s, past its 50 s renew
    // deadline and its 60 s lease: its timers (the limiter's, the step-down's) all fire late,
    // in due order, when it resumes: the limiter's first.
    const backend = new LeaseBackend();
    const timeA = new VirtualTime();
    const timeB = new VirtualTime();
    const a = new LeaseElector({ store: backend.storeFor('pod-a'), identity: 'pod-a', timers: timeA, ...timings });
    const b = new LeaseElector({ store: backend.storeFor('pod-b'), identity: 'pod-b', timers: timeB, ...timings });
    await a.start();
    await b.start();
    expect(a.leading).toBe(true);
    const emu = await startEmulator({ tokens: ['lease-writer'] });
    // One write a second: four of the five wait in pod-a's limiter when it is paused.
    const client = createClient({ url: emu.url, token: new Secret('lease-writer'), rate: 1, timers: timeA });
    try {
      // As the daemon runs a leader's sync: its requests carry the term, and every write is fenced by the Lease.
      const unfence = client.fenceWrites(a.fence);
      const leader = client.withSignal(a.term);
      const outcomes = Array.from({ length: 5 }, (_, i) => leader.createApikey({ name: `paused-${i}` }).then(() => 'created', (e: unknown) => String(e)));
      expect(await outcomes[0]).toBe('created');
      const posts = () => emu.requests().filter((r) => r.method === 'POST').length;
      expect(posts()).toBe(1);

      timeA.pause(70_000);
      await timeB.advance(70_000);
      expect(b.leading).toBe(true);
      // pod-a resumes: every overdue timer fires.
      await timeA.advance(0);
      const settled = await Promise.all(outcomes);
      // What the service received from pod-a: only the write sent before the pause.
      expect(posts()).toBe(1);
      expect(emu.state().apikeys.map((k) => k.name)).toEqual(['paused-0']);
      expect(a.leading).toBe(false);
      expect(a.term.aborted).toBe(true);
      for (const outcome of settled.slice(1)) expect(outcome).toMatch(/leadership lost: could not renew lease:amsync\/test for 50 s/);
      unfence();
    } finally {
      client.close();
      await emu.close();
    }
  });
});

describe('the Lease through @kubernetes/client-node against an API server that enforces resourceVersion', () => {
  it('acquires, refuses a second holder, and maps 409 to a conflict', async () => {
    const backend = new LeaseBackend();
    const api = await startLeaseApi(backend);
    try {
      const store = await kubeLeaseStore({ ref: { namespace: 'amsync', name: 'test' }, server: { url: api.url, skipTLSVerify: true } });
      expect(await store.get()).toBeUndefined();
      const timers = new VirtualTime();
      const a = new LeaseElector({ store, identity: 'pod-a', timers, ...timings });
      const b = new LeaseElector({ store: await kubeLeaseStore({ ref: { namespace: 'amsync', name: 'test' }, server: { url: api.url, skipTLSVerify: true } }), identity: 'pod-b', timers, ...timings });
      await a.tick();
      await b.tick();
      expect(a.leading).toBe(true);
      expect(b.leading).toBe(false);
      expect(backend.lease?.holderIdentity).toBe('pod-a');
      const stale = await store.get();
      await a.tick(); // a renewal moves the resourceVersion on
      await expect(store.update({ ...stale!, holderIdentity: 'intruder' })).rejects.toBeInstanceOf(LeaseConflictError);
      expect(api.requests.some((r) => r.startsWith('PUT /apis/coordination.k8s.io/v1/namespaces/amsync/leases/test'))).toBe(true);
    } finally {
      await api.close();
    }
  });

  it('parses lease:NAMESPACE/NAME and nothing else', () => {
    expect(parseLeaseRef('lease:amsync/amsync-leader')).toEqual({ namespace: 'amsync', name: 'amsync-leader' });
    for (const bad of ['amsync/x', 'lease:/x', 'lease:ns/', 'lease:NS/x', 'lease:ns/x/y']) expect(parseLeaseRef(bad)).toBeUndefined();
  });
});

describe('a leader resumed from a suspend (its monotonic clock stood still, the wall clock ran)', () => {
  it('is past its renew deadline by the wall clock: its write fence refuses, as the others see the lease expired', async () => {
    const backend = new LeaseBackend();
    const time = new VirtualTime();
    // Linux's CLOCK_MONOTONIC does not count a suspend: only the wall clock moves through it.
    let suspendedMs = 0;
    const timers = Object.assign(Object.create(time) as VirtualTime, { wallNow: () => time.wallNow() + suspendedMs });
    const a = new LeaseElector({ store: backend.storeFor('pod-a'), identity: 'pod-a', timers, ...timings });
    await a.start();
    expect(a.leading).toBe(true);
    expect(() => a.fence()).not.toThrow();
    suspendedMs = 70_000;
    expect(() => a.fence()).toThrow(/leadership lost: could not renew lease:amsync\/test for 50 s/);
    expect(a.leading).toBe(false);
    await a.stop();
  });
});
