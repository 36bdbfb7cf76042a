import { describe, expect, it } from 'vitest';
import { DaemonError, liveness, parseListen, readiness, retryDelay, type DaemonStatus } from '../../../src/daemon/index.js';

describe('failed runs retry with exponential backoff', () => {
  const options = { baseMs: 1000, maxMs: 60_000 };
  it.each([
    [1, 1, 1000],
    [2, 1, 2000],
    [3, 1, 4000],
    [6, 1, 32_000],
    [7, 1, 60_000],
    [50, 1, 60_000],
    [1, 0, 500],
    [3, 0, 2000],
    [3, 0.5, 3000],
  ])('after %i failure(s) with jitter %f it waits %i ms', (failures, random, expected) => {
    expect(retryDelay(failures, options, () => random)).toBe(expected);
  });

  it('never waits less than half a step nor more than the cap, whatever the randomness says', () => {
    for (const r of [-1, 0, 0.3, 1, 2, Number.NaN]) {
      const d = retryDelay(4, options, () => r);
      expect(d).toBeGreaterThanOrEqual(4000);
      expect(d).toBeLessThanOrEqual(8000);
    }
  });
});

describe('readiness: a sync has succeeded and failures have not persisted', () => {
  const base: DaemonStatus = {
    lastSuccessAt: undefined,
    lastOutcome: undefined,
    lastError: undefined,
    consecutiveFailures: 0,
    configValid: true,
    running: true,
    stuck: false,
    lastRunAbandoned: false,
    runDeadlineMs: 600_000,
    stopping: false,
    mode: 'apply',
  };
  const opts = { failureThreshold: 3 };

  it('is not ready while a run abandoned at its deadline hangs on, nor after an abandoned run until one completes; liveness fails only for the first', () => {
    const ok = { ...base, lastSuccessAt: 1 };
    expect(readiness({ ...ok, stuck: true }, opts)).toEqual({ ready: false, reason: 'a sync run passed its deadline (600 s), was abandoned, and has not stopped' });
    expect(readiness({ ...ok, lastRunAbandoned: true }, opts)).toEqual({ ready: false, reason: 'the last run passed its deadline (600 s) and was abandoned; the next run goes ahead' });
    expect(liveness({ ...ok, stuck: true })).toMatchObject({ ready: false });
    expect(liveness({ ...ok, lastRunAbandoned: true })).toEqual({ ready: true, reason: 'ok' });
  });

  it('is not ready before the first successful sync', () => {
    expect(readiness(base, opts)).toEqual({ ready: false, reason: 'no successful sync yet' });
    expect(readiness({ ...base, lastError: 'unavailable', consecutiveFailures: 1 }, opts).reason).toMatch(/unavailable/);
    expect(readiness({ ...base, configValid: false }, opts).reason).toMatch(/invalid/);
  });

  it('is ready after one, and stays ready through fewer failures than the threshold', () => {
    expect(readiness({ ...base, lastSuccessAt: 1 }, opts).ready).toBe(true);
    expect(readiness({ ...base, lastSuccessAt: 1, consecutiveFailures: 2 }, opts).ready).toBe(true);
  });

  it('is not ready once failures persist, and says why by code only', () => {
    const r = readiness({ ...base, lastSuccessAt: 1, consecutiveFailures: 3, lastError: 'unauthorized' }, opts);
    expect(r).toEqual({ ready: false, reason: 'the last 3 runs failed: unauthorized' });
  });

  it('stays ready with an invalid file: the last good version is kept', () => {
    const r = readiness({ ...base, lastSuccessAt: 1, configValid: false }, opts);
    expect(r.ready).toBe(true);
    expect(r.reason).toMatch(/invalid/);
  });

  it('is not ready at once when the integrator key was rejected: no run fixes it, only a new key', () => {
    const r = readiness({ ...base, lastSuccessAt: 1, consecutiveFailures: 1, lastError: 'integrator_key_rejected' }, opts);
    expect(r.ready).toBe(false);
    expect(r.reason).toMatch(/^integrator_key_rejected: /);
  });

  // Issue 27, finding 4: a green daemon whose rotated key is not on disk is locked out at its next restart.
  it('is not ready when a rotated integrator key could not be written back, and says why and the fix', () => {
    const r = readiness({ ...base, lastSuccessAt: 1, keyWriteBackError: 'EROFS' }, opts);
    expect(r.ready).toBe(false);
    expect(r.reason).toBe(
      'integrator_key_not_persisted: the service rotated the integrator key and it could not be written back to its file (EROFS): a restart would use the retired key; make the key file writable (it is written again at the next renewal)',
    );
    const env = readiness({ ...base, lastSuccessAt: 1, keyWriteBackError: 'no_key_file' }, opts);
    expect(env.ready).toBe(false);
    expect(env.reason).toMatch(/^integrator_key_not_persisted: .*AMSYNC_REFRESH_TOKEN, which cannot be written back.*AMSYNC_REFRESH_TOKEN_FILE/);
  });

  it('is not ready while shutting down', () => {
    expect(readiness({ ...base, lastSuccessAt: 1, stopping: true }, opts)).toEqual({ ready: false, reason: 'shutting down' });
  });
});

describe('--listen HOST:PORT', () => {
  it.each([
    ['127.0.0.1:9477', '127.0.0.1', 9477],
    ['0.0.0.0:0', '0.0.0.0', 0],
    ['localhost:80', 'localhost', 80],
    ['[::1]:9477', '::1', 9477],
  ])('%s', (text, host, port) => {
    expect(parseListen(text)).toEqual({ host, port });
  });

  it.each(['9477', ':9477', '127.0.0.1', '127.0.0.1:70000', '::1:9477', 'a b:1', '127.0.0.1:x'])('refuses %s loudly', (text) => {
    expect(() => parseListen(text)).toThrow(DaemonError);
    expect(() => parseListen(text)).toThrow(/Expected `listen` to be HOST:PORT/);
  });
});
