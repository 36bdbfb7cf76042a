import { describe, expect, it } from 'vitest';
import { compileRules, faultRuleSchema, fireRule } from '../../../src/emulator/fault-rules.js';
import { FaultController } from '../../../src/emulator/faults.js';
import { createRng } from '../../../src/emulator/rng.js';

describe('fault rules', () => {
  it('fire after `after` matches, `times` times, for the matching method and path only', () => {
    const rules = compileRules([{ method: 'post', path: '^/api/sshusers$', after: 1, times: 2, status: 503 }]);
    const rng = createRng(1);
    const fired = ['POST', 'GET', 'POST', 'POST', 'POST', 'POST'].map((m) => fireRule(rules, m, '/api/sshusers', rng) !== null);
    expect(fired).toEqual([false, false, true, true, false, false]);
    expect(fireRule(rules, 'POST', '/api/sshusers/1', rng)).toBeNull();
    expect(rules[0]).toMatchObject({ matched: 5, fired: 2 });
  });

  it('fire with their probability, reproducibly for one seed', () => {
    const draw = (seed: number) => {
      const rules = compileRules([{ probability: 0.3, reset: true }]);
      const rng = createRng(seed);
      return Array.from({ length: 1000 }, () => fireRule(rules, 'GET', '/', rng) !== null);
    };
    const a = draw(7);
    expect(draw(7)).toEqual(a);
    const count = a.filter(Boolean).length;
    expect(count).toBeGreaterThan(200);
    expect(count).toBeLessThan(400);
  });

  it('are validated: one action, a valid regex, retry headers only with status', () => {
    expect(faultRuleSchema.safeParse({ status: 503, retryAfter: 2 }).success).toBe(true);
    expect(faultRuleSchema.safeParse({ delayMs: 100 }).success).toBe(true);
    expect(faultRuleSchema.safeParse({ commitThenFail: 'reset', delayMs: 5 }).success).toBe(true);
    expect(faultRuleSchema.safeParse({}).success).toBe(false);
    expect(faultRuleSchema.safeParse({ status: 503, reset: true }).success).toBe(false);
    expect(faultRuleSchema.safeParse({ path: '(', reset: true }).success).toBe(false);
    expect(faultRuleSchema.safeParse({ retryAfter: 1, reset: true }).success).toBe(false);
    expect(faultRuleSchema.safeParse({ status: 101 }).success).toBe(false);
    expect(faultRuleSchema.safeParse({ commitThenFail: 503 }).success).toBe(false);
    expect(faultRuleSchema.safeParse({ reset: true, bogus: 1 }).success).toBe(false);
  });
});

describe('fault controller', () => {
  const at = () => 0;

  it('answers 503 for maintenance before anything else', () => {
    const f = new FaultController({ maintenance: true, rateLimit: 1 }, createRng(1), at);
    expect(f.admit('GET', '/api/sshusers')).toMatchObject({ answer: { status: 503 }, label: 'maintenance' });
  });

  it('rate limits with a Retry-After in whole seconds', () => {
    const f = new FaultController({ rateLimit: 0.5 }, createRng(1), at);
    expect(f.admit('GET', '/').answer).toBeUndefined();
    const plan = f.admit('GET', '/');
    expect(plan).toMatchObject({ answer: { status: 503, headers: { 'Retry-After': '2' } }, label: 'rate-limit' });
  });

  it('rate limits without a Retry-After when told to (rateLimitRetryAfter: false), with the burst it is given', () => {
    const f = new FaultController({ rateLimit: 0.5, rateLimitBurst: 2, rateLimitRetryAfter: false }, createRng(1), at);
    expect(f.admit('GET', '/').answer).toBeUndefined();
    expect(f.admit('GET', '/').answer).toBeUndefined();
    const plan = f.admit('GET', '/');
    expect(plan).toMatchObject({ answer: { status: 503 }, label: 'rate-limit' });
    expect(plan.answer?.headers ?? {}).not.toHaveProperty('Retry-After');
  });

  it('fails at the fail rate with 500, 502 or 504', () => {
    const f = new FaultController({ failRate: 1 }, createRng(3), at);
    const statuses = new Set(Array.from({ length: 60 }, () => f.admit('GET', '/').answer?.status));
    expect([...statuses].sort()).toEqual([500, 502, 504]);
  });

  it('adds latency with jitter between 0.5 L and 1.5 L', () => {
    const f = new FaultController({ latencyMs: 100 }, createRng(3), at);
    const delays = Array.from({ length: 200 }, () => f.admit('GET', '/').delayMs);
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(50);
    expect(Math.max(...delays)).toBeLessThan(150);
    expect(new Set(delays).size).toBeGreaterThan(100);
  });

  it('turns rules into plans, with Retry-After as an HTTP-date', () => {
    const f = new FaultController({}, createRng(1), () => Date.parse('2024-01-01T00:00:00Z'));
    f.update({ rules: [{ status: 503, retryAfterDateIn: 2, times: 1 }, { cursorLoop: true, times: 1 }, { commitThenFail: 504 }] });
    expect(f.admit('GET', '/').answer?.headers).toEqual({ 'Retry-After': 'Mon, 01 Jan 2024 00:00:02 GMT' });
    expect(f.admit('GET', '/')).toMatchObject({ listMode: 'cursorLoop', label: 'rule:1' });
    expect(f.admit('GET', '/')).toMatchObject({ commitThenFail: 504, listMode: 'normal' });
    expect(f.stats).toEqual([
      { matched: 3, fired: 1 },
      { matched: 2, fired: 1 },
      { matched: 1, fired: 1 },
    ]);
  });

  it('refuses bad settings with a stable code and keeps the old ones', () => {
    const f = new FaultController({ latencyMs: 5 }, createRng(1), at);
    expect(() => f.update({ failRate: 2 })).toThrow(expect.objectContaining({ code: 'emulator_faults' }));
    expect(() => f.update({ unknown: true })).toThrow(expect.objectContaining({ code: 'emulator_faults' }));
    expect(f.current.latencyMs).toBe(5);
    expect(f.current.failRate).toBe(0);
  });
});

describe('the hold rule (a client killed at a known point)', () => {
  it('holds a request before or after it is performed until released; the HTTP control API lists and releases it', async () => {
    const { startEmulator } = await import('../../../src/emulator/index.js');
    expect(faultRuleSchema.safeParse({ hold: 'after' }).success).toBe(true);
    expect(faultRuleSchema.safeParse({ hold: 'later' }).success).toBe(false);
    expect(faultRuleSchema.safeParse({ hold: 'before', status: 500 }).success).toBe(false);
    const emu = await startEmulator({ tokens: ['t'] });
    try {
      emu.setFaults({ rules: [{ method: 'POST', path: '^/api/3rdparty/apikeys$', hold: 'after', times: 1 }] });
      const answer = fetch(`${emu.url}/api/3rdparty/apikeys`, { method: 'POST', headers: { Authorization: 'Bearer t', 'Content-Type': 'application/json' }, body: '{"name":"k"}' });
      const [held] = await emu.whenHeld();
      expect(held).toMatchObject({ method: 'POST', path: '/api/3rdparty/apikeys', hold: 'after', label: 'rule:0' });
      // Performed (the key exists), its answer not sent.
      expect(emu.state().apikeys.map((k) => k.name)).toEqual(['k']);
      expect(emu.requests()).toEqual([]);
      const listed = (await (await fetch(`${emu.url}/_emulator/held`)).json()) as { held: unknown[] };
      expect(listed.held).toHaveLength(1);
      expect(await (await fetch(`${emu.url}/_emulator/release`, { method: 'POST' })).json()).toEqual({ released: 1 });
      expect((await answer).status).toBe(200);
      expect(emu.held()).toEqual([]);
      emu.setFaults({ rules: [{ method: 'POST', hold: 'before', times: 1 }] });
      const second = fetch(`${emu.url}/api/3rdparty/apikeys`, { method: 'POST', headers: { Authorization: 'Bearer t', 'Content-Type': 'application/json' }, body: '{"name":"k2"}' });
      await emu.whenHeld();
      expect(emu.state().apikeys).toHaveLength(1);
      expect(emu.releaseHeld()).toBe(1);
      expect((await second).status).toBe(200);
      expect(emu.state().apikeys).toHaveLength(2);
    } finally {
      await emu.close();
    }
  });
});
