import { join } from 'node:path';
import { applyReads, changeCount } from './desired-file.js';
import { figure, type Figure } from './figures.js';
import type { BenchConfig, RateCase } from './bench-config.js';
import { applyChanges, logOf, pagesOf, withEmulator, type ApplyOutcome } from './bench-runs.js';
import { applyThroughput, type RequestStats } from './request-stats.js';

/**
 * Writes at a high rate × latency (R·L requests must be in flight to reach R), with `--rate R`
 * given; and against a hidden limit that the client must discover behind the server's
 * one-second burst. Each case runs against a fresh emulator (a full bucket).
 */
export async function rateScenarios(config: BenchConfig, workDir: string, figures: Figure[], details: Record<string, unknown>): Promise<void> {
  const cases = [
    ...config.configuredRateCases.map((c) => ({ ...c, configured: true })),
    ...config.discoveredRateCases.map((c) => ({ ...c, configured: false })),
  ];
  for (const c of cases) {
    const rl = (c.rate * c.latencyMs) / 1000;
    const scenario = `${c.configured ? `6 --rate ${c.rate}` : '7 hidden R'}, R·L ${formatRl(rl)}`;
    const id = `${c.configured ? 'rateConfigured' : 'rateDiscovered'}.R${c.rate}L${c.latencyMs}`;
    logOf(config)(`${scenario}: ${config.rateChanges} changes over ${config.rateItems} + ${config.rateItems} items, server R = ${c.rate}/s (one-second burst), L = ${c.latencyMs} ms`);
    const outcome = await withEmulator(config, { latencyMs: c.latencyMs, rateLimit: c.rate }, (emu) =>
      applyChanges(
        emu,
        config,
        { items: config.rateItems, changes: config.rateChanges, clientRate: c.configured ? c.rate : undefined, concurrency: undefined },
        join(workDir, id),
      ),
    );
    figures.push(...rateFigures(scenario, id, config, c, c.configured, outcome));
    details[id] = { rate: c.rate, latencyMs: c.latencyMs, configured: c.configured, wallMs: outcome.run.wallMs, cpuMs: outcome.run.cpuMs, stats: outcome.stats };
  }
}

const formatRl = (rl: number): string => (Number.isInteger(rl) ? String(rl) : rl.toFixed(1));

function rateFigures(scenario: string, id: string, config: BenchConfig, c: RateCase, configured: boolean, outcome: ApplyOutcome): Figure[] {
  const { stats } = outcome;
  const pages = 2 * pagesOf(config.rateItems, config.pageSize);
  const changes = changeCount(outcome.mix);
  const reads = applyReads(outcome.mix);
  return [
    ...throughputFigures({ id, scenario, stats, rate: c.rate, configured, how: `L = ${c.latencyMs} ms; ${configured ? `--rate ${c.rate}` : 'no --rate'}, default --concurrency` }),
    figure({
      id: `${id}.throttledPerThousand`,
      scenario,
      label: `503s per 1,000 calls (${stats.throttled} in ${stats.calls})`,
      value: (stats.throttled * 1000) / stats.calls,
      decimals: 2,
      target: { op: '<=', value: configured ? 1 : 5 },
    }),
    figure({
      id: `${id}.callsPerMinimum`,
      scenario,
      label: `calls ÷ (pages + changes + apply reads) (${stats.calls} ÷ (${pages} + ${changes} + ${reads}))`,
      value: stats.calls / (pages + changes + reads),
      decimals: 3,
      ...(configured ? { target: { op: '<=', value: 1.01 } as const } : {}),
    }),
  ];
}

/** The apply's calls/s ÷ R (the target) and its writes/s ÷ R (at most the writes' share of those calls). */
export function throughputFigures(a: { id: string; scenario: string; stats: RequestStats; rate: number; configured: boolean; how: string }): Figure[] {
  const { callsPerSecond, writesPerSecond, writeCeiling } = applyThroughput(a.stats);
  return [
    figure({
      id: `${a.id}.applyCallsPerSecondPerRate`,
      scenario: a.scenario,
      label: `apply calls/s ÷ R (${callsPerSecond.toFixed(1)} ÷ ${a.rate})`,
      value: callsPerSecond / a.rate,
      decimals: 3,
      target: { op: '>=', value: a.configured ? 0.95 : 0.9 },
      note: `${a.stats.applyCallsServed} calls the server served from the first write or read of the apply to the last one's answer: the writes and the GET before each delete (verified deletes), which share R; ${a.how}; longest pause between writes ${a.stats.maxWriteGapMs} ms`,
    }),
    figure({
      id: `${a.id}.writesPerSecondPerRate`,
      scenario: a.scenario,
      label: `writes/s ÷ R (${writesPerSecond.toFixed(1)} ÷ ${a.rate}; at most ${writeCeiling.toFixed(3)})`,
      value: writesPerSecond / a.rate,
      decimals: 3,
      note: `${a.stats.writesDone} writes from the first one's arrival to the last one's answer; at most ${a.stats.writesDone} ÷ ${a.stats.applyCallsServed} of R, as the verifying reads share it`,
    }),
  ];
}
