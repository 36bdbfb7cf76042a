import { describe, expect, it } from 'vitest';
import type { LoggedRequest } from './emulator-process.js';
import { applyThroughput, requestStats } from './request-stats.js';

let seq = 0;
const at = (ms: number, method: string, path: string, status = 200): LoggedRequest => ({
  seq: (seq += 1),
  method,
  path,
  query: {},
  status,
  time: new Date(Date.UTC(2026, 10, 23, 12, 0, 0, ms)).toISOString(),
  durationMs: 0,
});

describe('what the rate of an apply is measured on', () => {
  it('the calls the server served during the apply, verifying reads included; writes/s beside it with its ceiling', () => {
    // One second: a list page, three writes, a GET that verifies a delete, the DELETE, and a
    // write refused with 503 (it spent nothing of R: the server answered at once).
    const log = [
      at(0, 'GET', '/api/sshusers'),
      at(0, 'POST', '/api/sshusers'),
      at(200, 'PUT', '/api/sshusers/2'),
      at(400, 'GET', '/api/sshusers/3'),
      at(500, 'POST', '/api/sshusers', 503),
      at(600, 'DELETE', '/api/sshusers/3'),
      at(1000, 'POST', '/api/sshusers'),
    ];
    const stats = requestStats(log);
    expect(stats.applyCallsServed).toBe(5);
    expect(stats.applySpanMs).toBe(1000);
    const { callsPerSecond, writesPerSecond, writeCeiling } = applyThroughput(stats);
    expect(callsPerSecond).toBe(5);
    expect(writesPerSecond).toBe(4);
    expect(writeCeiling).toBe(0.8);
  });
});
