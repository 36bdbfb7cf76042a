import { describe, expect, it } from 'vitest';
import { assertBuilt } from '../helpers/spawn.js';
import { renderTable, type Figure } from './figures.js';
import { runBench, type BenchConfig } from './run-bench.js';

/**
 * The benchmark of `npm run bench`, at a few hundred items and without a server rate limit,
 * so it cannot rot: it checks the figures that are exact (calls per page, writes, calls per
 * change), never a time or a rate.
 */
const small: BenchConfig = {
  items: 300,
  pageSize: 100,
  serverRate: undefined,
  clientRate: 1000,
  latencyMs: 0,
  changes: 60,
  applyConcurrency: undefined,
  footprintItems: 300,
  planItems: 300,
  refreshParallelism: 10,
  configuredRateCases: [{ rate: 1000, latencyMs: 0 }],
  discoveredRateCases: [{ rate: 1000, latencyMs: 0 }],
  rateItems: 300,
  rateChanges: 60,
  largePageItems: 300,
  largePageMax: 1000,
  tokensItems: 300,
  coldRuns: 1,
  cpuPairs: 1,
  exportItems: 300,
  discovery: { creates: 60, cases: [{ rate: 1000, latencyMs: 0, run: 'creates', retryAfter: false }] },
  // Only the CLI runs as a process (its calls, RSS and CPU are what is measured).
  emulatorInProcess: true,
};

describe('the benchmark, small', () => {
  it('runs every scenario and measures the exact figures exactly', { timeout: 180_000 }, async () => {
    assertBuilt();
    const result = await runBench(small);
    const value = (id: string): number => {
      const f = result.figures.find((x: Figure) => x.id === id);
      if (!f) throw new Error(`no figure ${id} in\n${renderTable(result.figures)}`);
      return f.value;
    };

    // A no-op sync: one GET per page and nothing else.
    expect(value('noop.listCallsPerPage.sshUsers')).toBe(1);
    expect(value('noop.listCallsPerPage.apikeys')).toBe(1);
    expect(value('noop.writes')).toBe(0);
    expect(value('noop.otherCalls')).toBe(0);
    expect(value('footprint.listCallsPerPage')).toBe(1);
    expect(value('footprint.writes')).toBe(0);

    // 60 changes over 6 pages: without faults or a limit, exactly pages + changes calls.
    for (const id of ['applyConfigured', 'applyDiscovered']) {
      expect(value(`${id}.callsPerMinimum`)).toBe(1);
      expect(value(`${id}.throttledPerThousand`)).toBe(0);
    }

    // The per-item refresh: one GET per item against amsync's one per page.
    expect(value('contrast.callsRatio')).toBe(100);

    // Below a limit of 1,000/s with a one-second burst, 60 changes never meet a 503.
    for (const id of ['rateConfigured.R1000L0', 'rateDiscovered.R1000L0']) {
      expect(value(`${id}.callsPerMinimum`)).toBe(1);
      expect(value(`${id}.throttledPerThousand`)).toBe(0);
    }
    // The export writes every item (and the tokensDir scenario checked its 300 files itself).
    expect(value('export.itemsWritten')).toBe(1);

    // A fleet: every target gets exactly its pages, and with drift its changes and scope check.
    for (const id of ['fleet.noop', 'fleet.drift', 'fleet.driftInitialRate100']) expect(value(`${id}.callsPerMinimum`)).toBe(1);

    // The floors beside the CPU targets: the listing by bare node:http and by got as amsync's
    // transport sets it up (got is the client amsync keeps).
    for (const id of ['fleet.bare.cpuMsPerTarget', 'fleet.bareGot.cpuMsPerTarget', 'footprint.planCpuPerFloor', 'footprint.planCpuPerGotFloor']) expect(value(id)).toBeGreaterThan(0);

    // Every figure is a number, and the table and JSON render.
    for (const f of result.figures) expect(Number.isFinite(f.value), f.id).toBe(true);
    expect(renderTable(result.figures)).toContain('| 1 no-op sync');
    expect(JSON.parse(JSON.stringify(result)).figures).toHaveLength(result.figures.length);
  });
});
