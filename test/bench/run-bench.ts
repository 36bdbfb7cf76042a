import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ActualState, DesiredState } from '../../src/model/index.js';
import { planPolicy } from '../../src/sync/plan-policy.js';
import { plan } from '../../src/plan/index.js';
import type { BenchConfig, ScenarioName } from './bench-config.js';
import {
  applyChanges,
  logOf,
  noopAgain,
  noopSync,
  pagesOf,
  TOKEN,
  withEmulator,
  type ApplyOutcome,
  type SyncOutcome,
} from './bench-runs.js';
import type { MeasuredCliRun } from './cli-process.js';
import { coldStart } from './cold-start.js';
import { applyReads, changeCount } from './desired-file.js';
import type { EmulatorProcess } from './emulator-process.js';
import { figure, type Figure } from './figures.js';
import { refreshPerItem, type RefreshResult } from './per-item-refresh.js';
import { rateScenarios, throughputFigures } from './rate-scenarios.js';
import { applyThroughput, listRoutes, requestStats, type RequestStats } from './request-stats.js';
import { exportScenario, largePages, planBesideBareListing, tokensDirScenario } from './scale-scenarios.js';
import { fleetScenario } from './fleet-scenario.js';
import { discoveryScenario } from './discovery-scenario.js';

export { fullConfig, type BenchConfig } from './bench-config.js';

/** Raw measurements behind the figures, kept in bench-results.json so runs can be compared. */
export interface ScenarioDetails {
  readonly [scenario: string]: unknown;
}

export interface BenchResult {
  readonly config: Omit<BenchConfig, 'log'>;
  readonly figures: Figure[];
  readonly details: ScenarioDetails;
}

/**
 * The second footprint run bounds V8's old space as Node does by itself where memory is
 * limited (it sizes the heap from the memory available): what a sidecar with a memory limit
 * sees. Unbounded, on a host with GBs free, V8 lets garbage grow to several times the live set.
 */
const boundedHeapMb = 256;

/** Runs every scenario (or those in `config.only`), each against its own emulator child process. */
export async function runBench(config: BenchConfig): Promise<BenchResult> {
  const workDir = await mkdtemp(join(tmpdir(), 'amsync-bench-'));
  const figures: Figure[] = [];
  const details: Record<string, unknown> = {};
  const runs = (name: ScenarioName): boolean => config.only === undefined || config.only.includes(name);
  const scenarios: [ScenarioName, (c: BenchConfig, w: string, f: Figure[], d: Record<string, unknown>) => Promise<void>][] = [
    ['noop', noopAndContrast],
    ['apply', applyScenarios],
    ['footprint', footprint],
    ['rates', rateScenarios],
    ['pages', largePages],
    ['tokens', tokensDirScenario],
    ['cold', coldStart],
    ['export', exportScenario],
    ['fleet', fleetScenario],
    ['discovery', discoveryScenario],
  ];
  try {
    for (const [name, run] of scenarios) {
      if (!runs(name)) continue;
      const before = figures.length;
      try {
        await run(config, workDir, figures, details);
      } catch (error) {
        // One scenario that fails (or runs out of time) must not cost the figures of the others.
        const message = error instanceof Error ? error.message : String(error);
        figures.push(figure({ id: `${name}.failed`, scenario: name, label: `scenario ${name} did not finish`, value: Number.NaN, decimals: 0, target: { op: '=', value: 0 }, note: message.slice(0, 500) }));
      }
      // As they come, so a run that dies later keeps them.
      for (const f of figures.slice(before)) logOf(config)(`  ${f.id} = ${f.value}${f.note ? ` (${f.note})` : ''}`);
    }
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
  const { log: _log, ...shown } = config;
  return { config: shown, figures, details };
}

/** Scenario 1, then scenario 5 on the same emulator and data. */
async function noopAndContrast(config: BenchConfig, workDir: string, figures: Figure[], details: Record<string, unknown>): Promise<void> {
  const log = logOf(config);
  log(`1 no-op sync: ${config.items} users and ${config.items} keys, L = ${config.latencyMs} ms`);
  const noop = await withEmulator(config, { latencyMs: config.latencyMs }, async (emu) => {
    const outcome = await noopSync(emu, config, config.items, join(workDir, 'noop'));
    log(`5 per-item refresh of the same ${2 * config.items} items, parallelism ${config.refreshParallelism}`);
    await emu.clearRequests();
    const ids = Array.from({ length: config.items }, (_, i) => i + 1);
    const targets = [
      { route: listRoutes.sshUsers, ids },
      { route: listRoutes.apikeys, ids },
    ];
    const refresh = await refreshPerItem(emu.url, TOKEN, targets, config.refreshParallelism);
    return { ...outcome, refresh, refreshStats: requestStats(await emu.requests()) };
  });
  figures.push(...noopFigures('1 no-op sync', 'noop', config, config.items, noop));
  details.noop = { wallMs: noop.run.wallMs, cpuMs: noop.run.cpuMs, maxRssKb: noop.run.maxRssKb, stats: noop.stats };
  figures.push(...contrastFigures(config, noop));
  details.contrast = { refresh: noop.refresh, stats: noop.refreshStats };
}

/** Scenarios 2 and 3, each against a fresh emulator (a full token bucket). */
async function applyScenarios(config: BenchConfig, workDir: string, figures: Figure[], details: Record<string, unknown>): Promise<void> {
  for (const [scenario, id, clientRate] of [
    [`2 apply, --rate ${config.clientRate}`, 'applyConfigured', config.clientRate],
    ['3 apply, no --rate', 'applyDiscovered', undefined],
  ] as const) {
    logOf(config)(`${scenario}: ${config.changes} changes over ${config.items} + ${config.items} items, server R = ${config.serverRate ?? 'none'}`);
    const applied = await withEmulator(config, { latencyMs: config.latencyMs, rateLimit: config.serverRate }, (emu) => applySync(emu, config, clientRate, join(workDir, id)));
    figures.push(...applyFigures(scenario, id, config, clientRate !== undefined, applied));
    details[id] = { wallMs: applied.run.wallMs, cpuMs: applied.run.cpuMs, stats: applied.stats, mix: applied.mix };
  }
}

/**
 * Scenario 4: plan() CPU in this process, then the peak RSS of a whole no-op `amsync sync`, and
 * `amsync plan` (peak RSS, and CPU beside a bare node:http listing of the same pages).
 */
async function footprint(config: BenchConfig, workDir: string, figures: Figure[], details: Record<string, unknown>): Promise<void> {
  const log = logOf(config);
  log(`4 footprint: plan() of ${config.planItems} desired × ${config.planItems} actual per kind, in-process`);
  const planCpu = measurePlanCpu(config.planItems);
  log(`4 footprint: peak RSS of \`amsync sync\`, ${config.footprintItems} users and ${config.footprintItems} keys, then again with the heap bounded`);
  const dir = join(workDir, 'footprint');
  const [big, bounded, planned] = await withEmulator(config, { latencyMs: config.latencyMs }, async (emu) => {
    const first = await noopSync(emu, config, config.footprintItems, dir);
    const second = await noopAgain(emu, config, config.footprintItems, dir, { nodeFlags: [`--max-old-space-size=${boundedHeapMb}`] });
    log(`4 footprint: \`amsync plan\` beside a bare node:http + JSON.parse listing of the same pages`);
    return [first, second, await planBesideBareListing(emu, config, config.footprintItems, dir)] as const;
  });
  figures.push(...footprintFigures(config, planCpu, big, bounded), ...planned.figures);
  details.footprint = {
    planCpuMs: planCpu.cpuMs,
    planWallMs: planCpu.wallMs,
    defaultHeap: { wallMs: big.run.wallMs, cpuMs: big.run.cpuMs, maxRssKb: big.run.maxRssKb, stats: big.stats },
    boundedHeap: { maxOldSpaceMb: boundedHeapMb, wallMs: bounded.run.wallMs, cpuMs: bounded.run.cpuMs, maxRssKb: bounded.run.maxRssKb },
    plan: planned.details,
  };
}

function applySync(emu: EmulatorProcess, config: BenchConfig, clientRate: number | undefined, dir: string): Promise<ApplyOutcome> {
  return applyChanges(emu, config, { items: config.items, changes: config.changes, clientRate, concurrency: config.applyConcurrency }, dir);
}

function noopFigures(scenario: string, id: string, config: BenchConfig, items: number, outcome: SyncOutcome): Figure[] {
  const pages = pagesOf(items, config.pageSize);
  const { stats, run } = outcome;
  const allPages = stats.listCalls.sshUsers + stats.listCalls.apikeys;
  const floorMs = 2 * pages * config.latencyMs;
  const out = [
    figure({ id: `${id}.listCallsPerPage.sshUsers`, scenario, label: `list calls ÷ ceil(N/size), users (${stats.listCalls.sshUsers} / ${pages})`, value: stats.listCalls.sshUsers / pages, decimals: 3, target: { op: '=', value: 1 } }),
    figure({ id: `${id}.listCallsPerPage.apikeys`, scenario, label: `list calls ÷ ceil(N/size), keys (${stats.listCalls.apikeys} / ${pages})`, value: stats.listCalls.apikeys / pages, decimals: 3, target: { op: '=', value: 1 } }),
    figure({ id: `${id}.writes`, scenario, label: 'writes', value: stats.writeCalls, decimals: 0, target: { op: '=', value: 0 } }),
    figure({ id: `${id}.otherCalls`, scenario, label: 'calls besides the list pages', value: stats.calls - allPages, decimals: 0, target: { op: '=', value: 0 } }),
  ];
  if (config.latencyMs > 0) {
    out.push(
      figure({
        id: `${id}.wallPerPageLatency`,
        scenario,
        label: `wall time ÷ (pages × L) (${(run.wallMs / 1000).toFixed(2)} s ÷ ${2 * pages} × ${config.latencyMs} ms)`,
        value: run.wallMs / floorMs,
        decimals: 2,
        note: `the whole \`amsync sync\` process (start, reading the file, listing, planning); listing alone ${(stats.listSpanMs / 1000).toFixed(2)} s = ${(stats.listSpanMs / floorMs).toFixed(2)}. The kinds are listed at once and each cursor chain is serial, so 0.5 is the floor`,
      }),
    );
  }
  if (stats.pageSizes.join() !== String(config.pageSize)) throw new Error(`list calls asked for page sizes ${stats.pageSizes.join(', ')}`);
  return out;
}

function applyFigures(scenario: string, id: string, config: BenchConfig, configured: boolean, outcome: ApplyOutcome): Figure[] {
  const { stats } = outcome;
  const pages = 2 * pagesOf(config.items, config.pageSize);
  const changes = changeCount(outcome.mix);
  const reads = applyReads(outcome.mix);
  const rate = config.serverRate;
  const concurrency = config.applyConcurrency === undefined ? 'default --concurrency' : `--concurrency ${config.applyConcurrency}`;
  const out: Figure[] = [];
  if (rate !== undefined) {
    out.push(...throughputFigures({ id, scenario, stats, rate, configured, how: `${configured ? `--rate ${config.clientRate}` : 'no --rate'}, ${concurrency}` }));
  } else {
    out.push(figure({ id: `${id}.writesPerSecond`, scenario, label: 'writes/s (no server limit)', value: applyThroughput(stats).writesPerSecond, decimals: 0 }));
  }
  out.push(
    figure({
      id: `${id}.throttledPerThousand`,
      scenario,
      label: `503s per 1,000 calls (${stats.throttled} in ${stats.calls})`,
      value: (stats.throttled * 1000) / stats.calls,
      decimals: 2,
      ...(rate === undefined ? {} : { target: { op: '<=', value: configured ? 1 : 5 } as const }),
    }),
    figure({
      id: `${id}.callsPerMinimum`,
      scenario,
      label: `calls ÷ (pages + changes + apply reads) (${stats.calls} ÷ (${pages} + ${changes} + ${reads}))`,
      value: stats.calls / (pages + changes + reads),
      decimals: 3,
      // Without a known limit, the 503s that find it are calls too (≤ 5 per 1,000 above).
      ...(configured || rate === undefined ? { target: { op: '<=', value: 1.01 } as const } : {}),
    }),
  );
  return out;
}

function footprintFigures(config: BenchConfig, planCpu: { cpuMs: number; wallMs: number }, big: SyncOutcome, bounded: SyncOutcome): Figure[] {
  const scenario = '4 footprint';
  const n = config.footprintItems.toLocaleString('en-US');
  const pages = pagesOf(config.footprintItems, config.pageSize);
  const mb = (run: MeasuredCliRun) => (run.maxRssKb ?? Number.NaN) / 1024;
  const runNote = (run: MeasuredCliRun) => `wall ${(run.wallMs / 1000).toFixed(1)} s, CPU ${((run.cpuMs ?? 0) / 1000).toFixed(1)} s`;
  return [
    figure({
      id: 'footprint.planCpuMs',
      scenario,
      label: `plan() CPU, ${config.planItems.toLocaleString('en-US')} desired × ${config.planItems.toLocaleString('en-US')} actual per kind`,
      value: planCpu.cpuMs,
      unit: 'ms',
      decimals: 0,
      target: { op: '<=', value: 1000 },
      note: `in-process, process.cpuUsage around one cold call (wall ${planCpu.wallMs.toFixed(0)} ms); 1% of the items drift`,
    }),
    figure({
      id: 'footprint.peakRssMb',
      scenario,
      label: `peak RSS, \`amsync sync\` no-op, ${n} users + ${n} keys`,
      value: mb(big.run),
      unit: 'MB',
      decimals: 0,
      target: { op: '<=', value: 256 },
      note: `the CLI as a child process reading a real file, node's default heap sizing on this host; ru_maxrss reported by the process at exit; ${runNote(big.run)}`,
    }),
    figure({
      id: 'footprint.peakRssBoundedHeapMb',
      scenario,
      label: `same, old space bounded to ${boundedHeapMb} MB (--max-old-space-size)`,
      value: mb(bounded.run),
      unit: 'MB',
      decimals: 0,
      target: { op: '<=', value: 256 },
      note: `as node sizes its heap where memory is limited (a sidecar container); ${runNote(bounded.run)}`,
    }),
    figure({
      id: 'footprint.listCallsPerPage',
      scenario,
      label: `list calls ÷ pages, both kinds (${big.stats.listCalls.sshUsers + big.stats.listCalls.apikeys} / ${2 * pages})`,
      value: (big.stats.listCalls.sshUsers + big.stats.listCalls.apikeys) / (2 * pages),
      decimals: 3,
      target: { op: '=', value: 1 },
    }),
    figure({ id: 'footprint.writes', scenario, label: 'writes', value: big.stats.writeCalls, decimals: 0, target: { op: '=', value: 0 } }),
  ];
}

function contrastFigures(config: BenchConfig, noop: SyncOutcome & { refresh: RefreshResult; refreshStats: RequestStats }): Figure[] {
  const scenario = '5 contrast';
  const { refresh } = noop;
  return [
    figure({
      id: 'contrast.callsRatio',
      scenario,
      label: `per-item refresh calls ÷ amsync's (${refresh.calls} ÷ ${noop.stats.calls})`,
      value: refresh.calls / noop.stats.calls,
      decimals: 1,
      unit: '×',
      note: `one GET per item, parallelism ${config.refreshParallelism}, on scenario 1's data and emulator; ${refresh.throttled} throttled`,
    }),
    figure({
      id: 'contrast.timeRatio',
      scenario,
      label: `per-item refresh time ÷ amsync's (${(refresh.wallMs / 1000).toFixed(1)} s ÷ ${(noop.run.wallMs / 1000).toFixed(1)} s)`,
      value: refresh.wallMs / noop.run.wallMs,
      decimals: 1,
      unit: '×',
      note: "the refresh's requests alone against amsync's whole process (start, file, listing, plan): the comparison flatters the refresh",
    }),
  ];
}

/** plan() of `n` desired × `n` actual items per kind, 1% drifting, in this process: CPU of one cold call. */
export function measurePlanCpu(n: number): { cpuMs: number; wallMs: number; changes: number } {
  const drift = Math.floor(n / 100);
  const actual: ActualState = {
    sshUsers: Array.from({ length: n }, (_, i) => ({ id: i + 1, username: `bench-user-${i + 1}`, level: 'n1' })),
    apikeys: Array.from({ length: n }, (_, i) => ({ id: i + 1, name: `bench-key-${i + 1}`, superuser: false, roles: [] })),
  };
  const desired: DesiredState = {
    sshUsers: Array.from({ length: n }, (_, i) => ({
      username: `bench-user-${i + 1}`,
      level: 'n1',
      ensure: i < drift ? ('absent' as const) : ('present' as const),
      source: { file: 'access.yaml', line: 2 + i, col: 5 },
    })),
    apikeys: Array.from({ length: n }, (_, i) => ({
      name: `bench-key-${i + 1}`,
      superuser: false,
      roles: i < drift ? [1] : [],
      ensure: 'present' as const,
      source: { file: 'access.yaml', line: 3 + n + i, col: 5 },
    })),
    prune: { sshUsers: false, apikeys: false },
    protect: { sshUsers: ['root', 'admin*'], apikeys: [] },
  };
  const policy = planPolicy({ desired, passwordState: undefined });
  const wallStart = performance.now();
  const cpuStart = process.cpuUsage();
  const result = plan(desired, actual, policy);
  const cpu = process.cpuUsage(cpuStart);
  const wallMs = performance.now() - wallStart;
  if (result.changes.length !== 2 * drift) throw new Error(`plan() found ${result.changes.length} changes, expected ${2 * drift}`);
  return { cpuMs: (cpu.user + cpu.system) / 1000, wallMs, changes: result.changes.length };
}
