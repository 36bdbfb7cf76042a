/**
 * The full benchmark (`npm run bench`): the scenarios of issues 8 and 17 against the emulator
 * (each in a child process), a table of every figure against its target (DESIGN.md §7), and
 * the same as JSON in ./bench-results.json so runs can be compared. About 10 minutes on 2 cores.
 *
 *   npm run bench [-- --items N --changes N --rate R --latency-ms L --concurrency C
 *                     --footprint-items N --plan-items N --tokens-items N --export-items N
 *                     --fleet-targets N --fleet-concurrency C --fleet-growth N,N,…|none
 *                     --only noop|apply|footprint|rates|pages|tokens|cold|export|fleet|discovery --cpu-prof DIR]
 *
 * The fleet's size can also come from the environment (AMSYNC_BENCH_FLEET_TARGETS,
 * AMSYNC_BENCH_FLEET_GROWTH); a flag wins over its variable.
 *
 * `--cpu-prof DIR` runs every measured amsync process under `node --cpu-prof` (profiles in DIR),
 * to find out why a target is missed. Exit code 1 when a target does not hold.
 */
import { writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { renderNotes, renderTable } from './figures.js';
import { fleetGrowth, fullFleetSize, scenarioNames, type ScenarioName } from './bench-config.js';
import { fullConfig, runBench, type BenchConfig } from './run-bench.js';

const { values } = parseArgs({
  options: {
    items: { type: 'string' },
    changes: { type: 'string' },
    rate: { type: 'string' },
    'latency-ms': { type: 'string' },
    concurrency: { type: 'string' },
    'footprint-items': { type: 'string' },
    'plan-items': { type: 'string' },
    'tokens-items': { type: 'string' },
    'export-items': { type: 'string' },
    'cpu-prof': { type: 'string' },
    'fleet-targets': { type: 'string' },
    'fleet-concurrency': { type: 'string' },
    'fleet-growth': { type: 'string' },
    only: { type: 'string', multiple: true },
    out: { type: 'string', default: 'bench-results.json' },
  },
});

const number = (flag: string, value: string | undefined, fallback: number | undefined): number | undefined => {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!(Number.isFinite(n) && n >= 0)) throw new Error(`Expected --${flag} to be a number from 0 upwards, got ${value}`);
  return n;
};

function scenarioName(name: string): ScenarioName {
  const known: readonly string[] = scenarioNames;
  if (known.includes(name)) return name as ScenarioName;
  throw new Error(`Expected --only to be one of ${scenarioNames.join(', ')}, got ${name}`);
}

const config: BenchConfig = {
  ...fullConfig,
  items: number('items', values.items, fullConfig.items)!,
  changes: number('changes', values.changes, fullConfig.changes)!,
  serverRate: number('rate', values.rate, fullConfig.serverRate),
  clientRate: number('rate', values.rate, fullConfig.clientRate)!,
  latencyMs: number('latency-ms', values['latency-ms'], fullConfig.latencyMs)!,
  applyConcurrency: number('concurrency', values.concurrency, fullConfig.applyConcurrency),
  footprintItems: number('footprint-items', values['footprint-items'], fullConfig.footprintItems)!,
  planItems: number('plan-items', values['plan-items'], fullConfig.planItems)!,
  tokensItems: number('tokens-items', values['tokens-items'], fullConfig.tokensItems)!,
  exportItems: number('export-items', values['export-items'], fullConfig.exportItems)!,
  fleet: {
    ...fullFleetSize,
    targets: number('fleet-targets', values['fleet-targets'] ?? (process.env.AMSYNC_BENCH_FLEET_TARGETS || undefined), fullFleetSize.targets)!,
    concurrency: number('fleet-concurrency', values['fleet-concurrency'], fullFleetSize.concurrency)!,
    growth: fleetGrowth(values['fleet-growth'], '--fleet-growth') ?? fleetGrowth(process.env.AMSYNC_BENCH_FLEET_GROWTH, 'AMSYNC_BENCH_FLEET_GROWTH') ?? fullFleetSize.growth,
  },
  ...(values.only === undefined ? {} : { only: values.only.map(scenarioName) }),
  ...(values['cpu-prof'] === undefined ? {} : { cliNodeFlags: ['--cpu-prof', '--cpu-prof-dir', resolve(values['cpu-prof'])] }),
  log: (line) => process.stderr.write(`bench: ${line}\n`),
};

// Other work on the machine shows in the rates (a stalled client loses its slots): say how busy it was.
const loadBefore = loadavg()[0]!;
const started = new Date();
const t0 = performance.now();
const result = await runBench(config);
const seconds = (performance.now() - t0) / 1000;

const machine = `${availableParallelism()} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), Node.js ${process.version}, ${process.platform}`;
const heading =
  `amsync benchmark — ${started.toISOString()} — ${machine}\n` +
  `emulator in a child process: L = ${config.latencyMs} ms (0.5 L to 1.5 L), page size ${config.pageSize}; ` +
  `server R = ${config.serverRate ?? 'none'}/s in scenarios 2 and 3, as listed in 6 and 7; whole run ${seconds.toFixed(0)} s; ` +
  `load average ${loadBefore.toFixed(1)} before, ${loadavg()[0]!.toFixed(1)} after`;
process.stdout.write(`${heading}\n\n${renderTable(result.figures)}\n\nNotes:\n${renderNotes(result.figures)}\n`);

const missed = result.figures.filter((f) => f.holds === false);
await writeFile(values.out, `${JSON.stringify({ startedAt: started.toISOString(), seconds, machine, loadAverage: { before: loadBefore, after: loadavg()[0] }, ...result }, null, 2)}\n`);
process.stdout.write(`\n${missed.length === 0 ? 'Every target holds.' : `${missed.length} target(s) missed: ${missed.map((f) => f.id).join(', ')}`} Results in ${values.out}.\n`);
process.exitCode = missed.length === 0 ? 0 : 1;
