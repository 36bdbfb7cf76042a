import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createTargetMetrics } from '../../src/daemon/target-metrics.js';
import { notifyEventNames } from '../../src/model/index.js';
import { createMetrics, metricKinds, notificationOutcomes, runOutcomes, type AmsyncMetrics, type ChangeOutcome, type MetricAction } from '../../src/obs/metrics.js';
import { parseExposition } from '../helpers/daemon-prom-parse.js';
import { root } from '../helpers/paths.js';

/**
 * README's metrics tables say how many series each family has: a number is there from the first
 * scrape, "≤ N" reaches N once every label value occurred. Both are counted here on the
 * registry the daemon serves, fresh and after every closed label value was recorded; every
 * amsync_ family the registry has is in a table.
 */

const readme = readFileSync(join(root, 'README.md'), 'utf8');

interface Row {
  readonly name: string;
  readonly type: string;
  readonly series: string;
}

/** The rows of the table whose header starts with `header`. */
function table(header: string): Row[] {
  const lines = readme.split('\n').map((l) => l.trim());
  const start = lines.findIndex((l) => l.startsWith(header));
  expect(start, header).toBeGreaterThan(0);
  const rows: Row[] = [];
  for (const line of lines.slice(start + 2)) {
    const m = /^\| `(\w+)` \| (\w+) \| ([^|]+) \|/.exec(line);
    if (!m) break;
    rows.push({ name: m[1]!, type: m[2]!, series: m[3]!.trim() });
  }
  return rows;
}

/** `5` → exactly 5 from the start; `≤ 18: …` → 18 once all occurred; else not a number. */
function stated(series: string): { at: 'start' | 'all' | 'none'; count: number } {
  const m = /^(≤ )?(\d+)/.exec(series);
  if (!m) return { at: 'none', count: NaN };
  return { at: m[1] || /after/.test(series) ? 'all' : 'start', count: Number(m[2]) };
}

async function seriesByFamily(registry: Registry, only?: (labels: Record<string, string>) => boolean): Promise<Map<string, { type: string; count: number }>> {
  const e = parseExposition(await registry.metrics());
  const out = new Map<string, { type: string; count: number }>();
  for (const f of e.families.values()) out.set(f.name, { type: f.type, count: f.samples.filter((s) => only === undefined || only(s.labels)).length });
  return out;
}

const actions: MetricAction[] = ['create', 'update', 'delete'];
const changeOutcomes: ChangeOutcome[] = ['applied', 'failed', 'skipped'];

/** Every closed label value of the single-service families, once each. */
function recordEverything(m: AmsyncMetrics): void {
  for (const outcome of runOutcomes) m.recordRun(outcome, 1);
  for (const kind of metricKinds) for (const action of actions) for (const outcome of changeOutcomes) m.recordChange(kind, action, outcome);
  for (const action of ['exchanged', 'renewed', 'renewal_deferred', 'rejected']) m.observeCredential({ action });
  for (const event of notifyEventNames) for (const outcome of notificationOutcomes) m.recordNotification(event, outcome);
  m.recordAbandoned();
  m.setExpiries?.(Date.now(), 2);
}

describe("README's metrics tables give the real series counts", () => {
  it('the single-service table: every family of the registry, its type, and its series fresh and once every label value occurred', async () => {
    const rows = table('| metric | type | series | labels |');
    const metrics = createMetrics({ version: 'test' });
    const fresh = await seriesByFamily(metrics.registry);
    recordEverything(metrics);
    const full = await seriesByFamily(metrics.registry);
    expect(rows.map((r) => r.name).sort()).toEqual([...full.keys()].sort());
    for (const row of rows) {
      expect(row.type, row.name).toBe(full.get(row.name)!.type);
      const { at, count } = stated(row.series);
      if (at === 'none') {
        // Route-labelled families: grow with the routes seen; none before a request.
        expect(row.series, row.name).toMatch(/per method/);
        continue;
      }
      if (at === 'start') expect(fresh.get(row.name)!.count, `${row.name} at the first scrape`).toBe(count);
      expect(full.get(row.name)!.count, `${row.name} with every label value`).toBe(count);
    }
  });

  it('the fleet table: series per target, every per-target family', async () => {
    const rows = table('| metric | type | series per target |');
    const registry = new Registry();
    const target = createTargetMetrics(registry, createMetrics({ version: 'test' }));
    const one = target.forTarget('one');
    target.forTarget('two');
    const ofOne = (labels: Record<string, string>) => labels.target === 'one';
    const fresh = await seriesByFamily(registry, ofOne);
    for (const outcome of runOutcomes) one.recordRun(outcome, 1);
    for (const outcome of changeOutcomes) one.recordChange('sshUser', 'create', outcome);
    one.recordAbandoned();
    const full = await seriesByFamily(registry, ofOne);
    const perTarget = [...full.keys()].filter((name) => name.startsWith('amsync_target_'));
    expect(rows.map((r) => r.name).sort()).toEqual(perTarget.sort());
    for (const row of rows) {
      const { at, count } = stated(row.series);
      expect(at, row.name).not.toBe('none');
      if (at === 'start') expect(fresh.get(row.name)!.count, `${row.name} at the first scrape`).toBe(count);
      expect(full.get(row.name)!.count, `${row.name} after runs`).toBe(count);
    }
    // The sum the text states.
    const total = rows.reduce((sum, r) => sum + stated(r.series).count, 0);
    expect(readme).toContain(`${total} at most: plan for ${total} series per target`);
    expect([...full.values()].reduce((sum, f) => sum + f.count, 0)).toBe(total);
  });
});
