import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fullDiscoverySize, type BenchConfig } from './bench-config.js';
import { amsync, applyChanges, checkedReport, logOf, withEmulator } from './bench-runs.js';
import { desiredYaml, noChanges } from './desired-file.js';
import type { EmulatorProcess, LoggedRequest } from './emulator-process.js';
import { figure, type Figure } from './figures.js';
import { applyThroughput, requestStats, type RequestStats } from './request-stats.js';

/** 503s more than this apart belong to different overshoots (the emulator's Retry-After is at least 1 s). */
const overshootGapMs = 1000;

/** The 503s of a request log grouped into overshoots, in order: a 503 more than `gapMs` after the one before starts a new one. */
export function overshootSizes(log: readonly LoggedRequest[], gapMs = overshootGapMs): number[] {
  const times = log
    .filter((r) => r.path.startsWith('/api/') && (r.status === 503 || r.status === 429))
    .map((r) => Date.parse(r.time))
    .sort((a, b) => a - b);
  const sizes: number[] = [];
  let last = Number.NEGATIVE_INFINITY;
  for (const at of times) {
    if (at - last > gapMs) sizes.push(0);
    sizes[sizes.length - 1]! += 1;
    last = at;
  }
  return sizes;
}

/**
 * Scenario 13 (issue 32): polite discovery of a limit hidden behind a token bucket with one
 * second of burst, no `--rate`. Figures: the 503s of the first discovery of R (the first
 * overshoot), the 503s per 1,000 calls of the whole run, and the apply's calls/s ÷ R.
 *
 * The full runs (fullDiscoverySize in bench-config.ts):
 * - R = 50 at ~0 ms latency, a run of 1,200 creates on an empty service: the first 503 is read
 *   at once, while what the limiter let through is still to be sent.
 * - R = 200 at L = 50 and 100 ms (R·L 10 and 20), scenario 7's apply (2,000 changes over
 *   1,000 + 1,000 items): many requests are on the wire when the first 503 is read.
 *
 * Each with the emulator's Retry-After on its 503s, and without one (the service's
 * documentation promises none: `rateLimitRetryAfter: false`).
 */
export async function discoveryScenario(config: BenchConfig, workDir: string, figures: Figure[], details: Record<string, unknown>): Promise<void> {
  const { cases, creates } = config.discovery ?? fullDiscoverySize;
  for (const c of cases) {
    const rl = (c.rate * c.latencyMs) / 1000;
    const how = c.retryAfter ? 'Retry-After' : 'no Retry-After';
    const scenario = `13 discovery, R ${c.rate}, L ${c.latencyMs} ms, ${how}`;
    const id = `discovery.R${c.rate}L${c.latencyMs}${c.retryAfter ? '' : '.noRetryAfter'}`;
    const what = c.run === 'creates' ? `${creates} creates on an empty service` : `${config.rateChanges} changes over ${config.rateItems} + ${config.rateItems} items`;
    logOf(config)(`${scenario}: ${what}, hidden R = ${c.rate}/s (one-second burst), L = ${c.latencyMs} ms (R·L ${rl}), no --rate`);
    const outcome = await withEmulator(config, { latencyMs: c.latencyMs, rateLimit: c.rate }, async (emu) => {
      if (!c.retryAfter) await emu.setFaults({ rateLimitRetryAfter: false });
      return c.run === 'creates' ? createRun(emu, config, creates, join(workDir, id)) : applyRun(emu, config, join(workDir, id));
    });
    const { stats, overshoots } = outcome;
    const { callsPerSecond } = applyThroughput(stats);
    figures.push(
      figure({
        id: `${id}.firstDiscovery503s`,
        scenario,
        label: `503s at the first discovery of R (overshoots: ${overshoots.length === 0 ? 'none' : overshoots.join(', ')})`,
        value: overshoots[0] ?? 0,
        decimals: 0,
        ...(c.firstTarget === undefined ? {} : { target: { op: '<=', value: c.firstTarget } as const }),
        note: `${what}; 503s grouped into overshoots: a 503 more than ${overshootGapMs} ms after the one before starts a new one; the first is the discovery`,
      }),
      figure({
        id: `${id}.throttledPerThousand`,
        scenario,
        label: `503s per 1,000 calls (${stats.throttled} in ${stats.calls})`,
        value: (stats.throttled * 1000) / stats.calls,
        decimals: 2,
        target: { op: '<=', value: 5 },
      }),
      figure({
        id: `${id}.applyCallsPerSecondPerRate`,
        scenario,
        label: `apply calls/s ÷ R (${callsPerSecond.toFixed(1)} ÷ ${c.rate})`,
        value: callsPerSecond / c.rate,
        decimals: 3,
        target: { op: '>=', value: 0.9 },
        note: `${stats.applyCallsServed} calls served from the first call of the apply to the last one's answer (the burst included); longest pause between writes ${stats.maxWriteGapMs} ms`,
      }),
    );
    details[id] = { ...c, ...(c.run === 'creates' ? { creates } : {}), wallMs: outcome.wallMs, cpuMs: outcome.cpuMs, overshoots, stats };
  }
}

interface CreateRun {
  readonly stats: RequestStats;
  readonly overshoots: number[];
  readonly wallMs: number;
  readonly cpuMs: number | undefined;
}

/** Scenario 7's apply (bench-runs' applyChanges: it checks every change applied). */
async function applyRun(emu: EmulatorProcess, config: BenchConfig, dir: string): Promise<CreateRun> {
  const outcome = await applyChanges(emu, config, { items: config.rateItems, changes: config.rateChanges, clientRate: undefined, concurrency: undefined }, dir);
  return { stats: outcome.stats, overshoots: overshootSizes(await emu.requests()), wallMs: outcome.run.wallMs, cpuMs: outcome.run.cpuMs };
}

/** `amsync sync` creating `creates` items on an empty service; checks that each was created once. */
async function createRun(emu: EmulatorProcess, config: BenchConfig, creates: number, dir: string): Promise<CreateRun> {
  await mkdir(dir, { recursive: true });
  await emu.reset();
  const mix = { ...noChanges, userCreates: Math.ceil(creates / 2), keyCreates: Math.floor(creates / 2) };
  await writeFile(join(dir, 'access.yaml'), desiredYaml(0, mix));
  await emu.clearRequests();
  const run = await amsync(emu, config, dir, ['sync', '-f', 'access.yaml', '--json', '--page-size', String(config.pageSize), '--state-file', join(dir, 'state.json')]);
  const report = checkedReport(run);
  const applied = report.results?.filter((r) => r.status === 'applied').length ?? 0;
  if (applied !== creates) throw new Error(`expected ${creates} creates applied, got ${applied}: ${JSON.stringify(report.summary)}`);
  const log = await emu.requests();
  const created = log.filter((r) => r.method === 'POST' && r.path.startsWith('/api/') && r.status >= 200 && r.status < 300).length;
  if (created !== creates) throw new Error(`expected ${creates} creates on the service, its log has ${created}: one was lost or repeated`);
  return { stats: requestStats(log), overshoots: overshootSizes(log), wallMs: run.wallMs, cpuMs: run.cpuMs };
}
