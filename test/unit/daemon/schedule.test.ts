import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { checkSchedule, cronSchedule, DaemonError } from '../../../src/daemon/index.js';
import { waitFor } from '../../helpers/daemon-deferred.js';

describe('--schedule CRON', () => {
  it.each(['*/5 * * * *', '0 3 * * 1-5', '*/2 * * * * *', '30 */10 * * * *'])('takes %s (five fields, or six with seconds)', (expression) => {
    expect(() => checkSchedule(expression)).not.toThrow();
  });

  it.each(['', '* * * *', '* * * * * * *', '61 * * * *', 'every 5 minutes', '@hourly'])('refuses %j loudly', (expression) => {
    expect(() => checkSchedule(expression)).toThrow(DaemonError);
    expect(() => checkSchedule(expression)).toThrow(/five fields .* or six \(seconds first\)/);
  });

  it('fires on a six-field schedule with node-cron, and stops', async () => {
    let fired = 0;
    const schedule = cronSchedule('* * * * * *', () => (fired += 1), pino({ level: 'silent' }));
    try {
      await waitFor(() => fired >= 1, 'a scheduled fire', 5000);
    } finally {
      await schedule.stop();
    }
    const after = fired;
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(fired).toBe(after);
  });
});
