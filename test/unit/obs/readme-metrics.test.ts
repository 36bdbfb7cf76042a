import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../../src/obs/metrics.js';
import { root } from '../../helpers/paths.js';

/**
 * The README's metrics table (Running as a sidecar → Metrics) and the daemon's registry agree:
 * every amsync_ metric the daemon exports has a row, and every row names one it exports, with
 * its type. A metric added without a row (the expiry gauges of issue 30, say) or a row left
 * behind by a rename fails here.
 */

function readmeRows(): Map<string, string> {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n### Metrics\n'), readme.indexOf('\n### Notifications\n'));
  return new Map([...section.matchAll(/^\| `(amsync_\w+)` \| (\w+) \|/gm)].map((m) => [m[1]!, m[2]!]));
}

async function registered(): Promise<Map<string, string>> {
  const body = (await createMetrics({ version: 'test' }).render()).body;
  return new Map([...body.matchAll(/^# TYPE (amsync_\w+) (\w+)$/gm)].map((m) => [m[1]!, m[2]!]));
}

describe('README metrics table', () => {
  it('has a row, with the right type, for each amsync_ metric the daemon exports, and no other', async () => {
    const rows = readmeRows();
    const metrics = await registered();
    expect(rows.size).toBeGreaterThan(20);
    expect([...rows.entries()].sort()).toEqual([...metrics.entries()].sort());
  });

  it('lists the expiry gauges', () => {
    const rows = readmeRows();
    expect(rows.get('amsync_next_expiry_timestamp_seconds')).toBe('gauge');
    expect(rows.get('amsync_items_expiring')).toBe('gauge');
  });
});
