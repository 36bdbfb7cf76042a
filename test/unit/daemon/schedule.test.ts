import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { checkSchedule, cronSchedule, DaemonError } from '../../../src/daemon/index.js';

describe('--schedule CRON', () => {
  it.each(['*/5 * * * *', '0 3 * * 1-5', '*/2 * * * * *', '30 */10 * * * *'])('takes %s (five fields, or six with seconds)', (expression) => {
    expect(() => checkSchedule(expression)).not.toThrow();
  });

  it.each(['', '* * * *', '* * * * * * *', '61 * * * *', 'every 5 minutes', '@hourly'])('refuses %j loudly', (expression) => {
    expect(() => checkSchedule(expression)).toThrow(DaemonError);
    expect(() => checkSchedule(expression)).toThrow(/five fields .* or six \(seconds first\)/);
  });

  it('fires on a six-field schedule with node-cron, and stops', async () => {
    // node-cron reads the global clock and timers (it takes no Timers): vitest's fake timers
    // stand in for them here, so the schedule fires when the test moves time, not at a real second.
    vi.useFakeTimers({ now: Date.UTC(2025, 0, 1, 0, 0, 0, 500) });
    try {
      let fired = 0;
      const schedule = cronSchedule('* * * * * *', () => (fired += 1), pino({ level: 'silent' }));
      try {
        await vi.advanceTimersByTimeAsync(1000);
        expect(fired).toBeGreaterThanOrEqual(1);
      } finally {
        await schedule.stop();
      }
      const after = fired;
      await vi.advanceTimersByTimeAsync(3000);
      expect(fired).toBe(after);
    } finally {
      vi.useRealTimers();
    }
  });
});
