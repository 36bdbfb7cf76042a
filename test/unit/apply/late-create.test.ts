import { describe, expect, it } from 'vitest';
import { applyPlan, lateCreateWaits } from '../../../src/apply/index.js';
import type { DesiredState, SecretValue } from '../../../src/model/index.js';
import { plan } from '../../../src/plan/index.js';
import { readActualState } from '../../../src/state/index.js';
import { apiError, StoreService } from '../../helpers/store-service.js';
import { desired, key, policyFor } from '../../helpers/plan-fixtures.js';
import { VirtualTime } from '../../helpers/virtual-time.js';

/** The chaos schedule of seed 3020: a 333 ms client timeout. */
const timeoutMs = 333;

async function syncOnce(service: StoreService, d: DesiredState, time: VirtualTime, extra: { signal?: AbortSignal; tokens?: Map<string, string> } = {}) {
  const { state } = await readActualState(service);
  const policy = policyFor(d);
  service.calls = [];
  return applyPlan(plan(d, state, policy), {
    writer: service,
    desired: d,
    actual: state,
    policy,
    onToken: async (name: string, token: SecretValue) => {
      extra.tokens?.set(name, token.reveal());
    },
    lateCreate: { waitsMs: [timeoutMs, 2 * timeoutMs, 4 * timeoutMs], timers: time },
    ...(extra.signal ? { signal: extra.signal } : {}),
  });
}

/**
 * The service holds the POST past the client's timeout (unknown outcome) and performs it only
 * after the listing number `landsBefore` of the drift looks (1 = the first re-list).
 */
function createLandsLate(s: StoreService, name: string, landsBefore: number): void {
  s.before('createApikey', (svc) => {
    for (let i = 1; i < landsBefore; i += 1) svc.before('listApikeys', () => undefined);
    svc.before('listApikeys', (late) => {
      late.seedKey(name);
    });
    throw apiError('unknown_outcome');
  });
}

describe('an apikey create whose outcome is unknown and that lands after the first re-list', () => {
  it('is found by a later look while this run holds the lock, and adopted: no second POST, no key left for a rival to duplicate', async () => {
    const s = new StoreService();
    const time = new VirtualTime({ runsByItself: true });
    const tokens = new Map<string, string>();
    createLandsLate(s, 'new-key-0', 2);
    const results = await syncOnce(s, desired({ apikeys: [key('new-key-0')] }), time, { tokens });
    // What the next writer lists once this run released the lock: the held create has landed by then.
    const ids = (await s.listApikeys()).filter((k) => k.name === 'new-key-0').map((k) => k.id);
    expect(ids).toHaveLength(1);
    expect(results).toMatchObject([{ kind: 'apikey', action: 'create', status: 'applied', id: ids[0], drift: expect.stringMatching(/found it as id \d+ on a later look .*adopted it/) }]);
    expect(s.calls.filter((c) => c.startsWith('createApikey'))).toHaveLength(1);
    // The lost answer carried the token: the listing's goes to the sink.
    expect(tokens.get('new-key-0')).toBe(`tok-${ids[0]}`);
    // Waited one client timeout before the look that found it.
    expect(time.now()).toBe(timeoutMs);
  });

  it('landing on the last look is still adopted', async () => {
    const s = new StoreService();
    const time = new VirtualTime({ runsByItself: true });
    createLandsLate(s, 'k', 4);
    const results = await syncOnce(s, desired({ apikeys: [key('k')] }), time);
    expect(results[0]).toMatchObject({ status: 'applied', drift: expect.stringContaining('adopted it') });
    expect(s.keys.size).toBe(1);
    expect(time.now()).toBe(timeoutMs * 7);
  });

  it('not listed after the last look: failed, not sent again, and the message says how long it looked', async () => {
    const s = new StoreService();
    const time = new VirtualTime({ runsByItself: true });
    s.before('createApikey', () => {
      throw apiError('unknown_outcome');
    });
    const results = await syncOnce(s, desired({ apikeys: [key('billing')] }), time);
    expect(results[0]).toMatchObject({ status: 'failed', id: null, error: expect.stringContaining('not sent again') });
    expect(results[0]!.error).toContain('not listed after looking for 2.3 s');
    expect(s.calls.filter((c) => c.startsWith('createApikey'))).toHaveLength(1);
    expect(s.calls.filter((c) => c === 'listApikeys')).toHaveLength(4);
    expect(s.keys.size).toBe(0);
  });

  it('an interrupt ends the waiting at once: failed with the message of the first look, no further listing', async () => {
    const s = new StoreService();
    const time = new VirtualTime();
    const stop = new AbortController();
    s.before('createApikey', () => {
      throw apiError('unknown_outcome');
    });
    const running = syncOnce(s, desired({ apikeys: [key('billing')] }), time, { signal: stop.signal });
    // Let the run reach its first wait, then interrupt it there.
    for (let i = 0; i < 20 && s.calls.filter((c) => c === 'listApikeys').length < 1; i += 1) await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    stop.abort(new Error('interrupted'));
    const results = await running;
    expect(results[0]).toMatchObject({ status: 'failed', error: expect.stringContaining('not sent again') });
    expect(results[0]!.error).not.toContain('looking for');
    expect(s.calls.filter((c) => c === 'listApikeys')).toHaveLength(1);
    expect(time.now()).toBe(0);
  });
});

describe('lateCreateWaits: the further looks, from the client timeout', () => {
  it('doubles from the timeout, three looks, at most 30 s of waiting in all', () => {
    expect(lateCreateWaits(333)).toEqual([333, 666, 1332]);
    expect(lateCreateWaits(10_000)).toEqual([10_000, 20_000]);
    expect(lateCreateWaits(20_000)).toEqual([20_000, 10_000]);
    expect(lateCreateWaits(30_000)).toEqual([30_000]);
    expect(lateCreateWaits(120_000)).toEqual([30_000]);
  });
});
