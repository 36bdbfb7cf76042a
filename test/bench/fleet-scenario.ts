import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { smallFleetSize, type BenchConfig } from './bench-config.js';
import { logOf, TOKEN } from './bench-runs.js';
import { runAmsync, runNode, usageOf, type MeasuredCliRun } from './cli-process.js';
import { applyReads, changeCount, desiredYaml, noChanges, type ChangeMix } from './desired-file.js';
import { amsyncBin, type LoggedRequest } from './emulator-process.js';
import { figure, type Figure } from './figures.js';
import { linearFit, marginalRatio } from './growth.js';

/**
 * Scenario 12, fleet (issues 18 and 32): N targets × M items on one multi-tenant emulator (a
 * child process, so its CPU and memory are not amsync's), a no-op `amsync plan --targets` and
 * a sync with 10 % drift at `--target-concurrency C`. Figures: CPU per target, peak RSS,
 * requests per target ÷ the minimum (pages, plus changes and the scope check with drift), and
 * the fleet's wall ÷ its floor, max(the slowest single target's listing, amsync's CPU ÷ the
 * cores it uses). Beside them the same targets listed by bare node:http (the CPU any client
 * pays), and the no-op at each size of `growth` (how CPU and memory grow with the fleet).
 */

/**
 * The cores amsync uses: one. A fleet run is one node process and its JavaScript runs on one
 * event loop; V8's GC helpers and libuv's pool add CPU that can run beside it, which only makes
 * CPU ÷ 1 larger (the ratio smaller), never the floor too small.
 */
export const amsyncCores = 1;

interface TenantEmulator {
  readonly url: string;
  control(tenant: string, method: string, name: string, body?: unknown): Promise<unknown>;
  requests(tenant: string): Promise<LoggedRequest[]>;
  /** The emulator process's CPU so far (Linux: /proc/PID/stat), NaN elsewhere. */
  cpuMs(): number;
  close(): Promise<void>;
}

/** utime + stime of a process, from /proc/PID/stat (clock ticks of 10 ms: USER_HZ is 100 on Linux). */
function procCpuMs(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

async function startTenants(count: number, latencyMs: number): Promise<TenantEmulator> {
  const args = [amsyncBin, 'emulator', '--port', '0', '--token', TOKEN, '--seed', '1', '--page-size-max', '100', '--tenants', String(count)];
  if (latencyMs > 0) args.push('--latency-ms', String(latencyMs));
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the emulator exited with ${code}: ${stderr}`)));
  });
  const url = line.slice('amsync emulator listening on '.length).trim();
  const control = async (tenant: string, method: string, name: string, body?: unknown): Promise<unknown> => {
    const res = await fetch(`${url}/t/${tenant}/_emulator/${name}`, { method, headers: body === undefined ? {} : { 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} /t/${tenant}/_emulator/${name} answered ${res.status}: ${text.slice(0, 300)}`);
    return text === '' ? undefined : JSON.parse(text);
  };
  return {
    url,
    control,
    async requests(tenant) {
      const body = (await control(tenant, 'GET', 'requests')) as { requests: LoggedRequest[]; dropped: number };
      if (body.dropped > 0) throw new Error(`tenant ${tenant} dropped ${body.dropped} log entries`);
      return body.requests;
    },
    cpuMs: () => procCpuMs(child.pid),
    async close() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** `concurrency` at a time, for the control API calls to every tenant. */
async function eachTenant(names: readonly string[], work: (name: string) => Promise<void>, concurrency = 16): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < names.length) await work(names[next++]!);
  }));
}

/** From the first list call's arrival to the end of the last one. */
function listSpanMs(log: readonly LoggedRequest[]): number {
  const lists = log.filter((r) => r.method === 'GET' && (r.path === '/api/sshusers' || r.path === '/api/3rdparty/apikeys'));
  if (lists.length === 0) return 0;
  const first = Math.min(...lists.map((r) => Date.parse(r.time)));
  const last = Math.max(...lists.map((r) => Date.parse(r.time) + r.durationMs));
  return last - first;
}

interface FleetRun {
  readonly run: MeasuredCliRun;
  /** API calls per tenant (control API excluded). */
  readonly callsPerTarget: number[];
  readonly failed: number;
  /** The emulator's CPU during the run. */
  readonly emulatorCpuMs: number;
}

/** One no-op plan of the first `targets` targets: what the growth figures stand on. */
export interface GrowthPoint {
  readonly targets: number;
  readonly cpuMs: number;
  readonly maxRssMb: number;
  readonly wallMs: number;
  /** Each run's CPU (the smaller is `cpuMs`). */
  readonly cpuMsRuns: readonly number[];
}

const bareFleetListing = fileURLToPath(new URL('./bare-fleet-listing.mjs', import.meta.url));

export async function fleetScenario(config: BenchConfig, workDir: string, figures: Figure[], details: Record<string, unknown>): Promise<void> {
  const size = config.fleet ?? smallFleetSize;
  const log = logOf(config);
  // Sizes up to the fleet's own: a smaller --fleet-targets keeps the run small.
  const growth = [...new Set(size.growth ?? [])].filter((n) => n > 0 && n <= size.targets).sort((a, b) => a - b);
  const tenants = Math.max(size.targets, ...growth);
  const names = Array.from({ length: tenants }, (_, i) => `t${i + 1}`);
  const fleetNames = names.slice(0, size.targets);
  const dir = join(workDir, 'fleet');
  await mkdir(dir, { recursive: true });
  log(`12 fleet: ${size.targets} targets × ${2 * size.items} items, L = ${config.latencyMs} ms, --target-concurrency ${size.concurrency}; growth ${growth.join(', ') || 'not measured'}`);
  const emu = await startTenants(tenants, config.latencyMs);
  try {
    await eachTenant(names, async (name) => {
      await emu.control(name, 'POST', 'seed', { count: { sshUsers: size.items, apikeys: size.items }, returnItems: false });
      await emu.control(name, 'DELETE', 'requests');
    });
    const drift: ChangeMix = { ...noChanges, keyUpdates: Math.round((2 * size.items) / 10) };
    await writeFile(join(dir, 'noop.yaml'), desiredYaml(size.items));
    await writeFile(join(dir, 'drift.yaml'), desiredYaml(size.items, drift));
    const targetsFile = (count: number) => `targets-${count}.yaml`;
    for (const count of new Set([size.targets, ...growth])) {
      await writeFile(join(dir, targetsFile(count)), ['targets:', ...names.slice(0, count).flatMap((n) => [`  - name: ${n}`, `    url: ${emu.url}/t/${n}`, '    token: { env: FLEET_TOKEN }'])].join('\n') + '\n');
    }
    const amsync = (args: string[], env: Record<string, string> = {}) => runAmsync(args, { cwd: dir, env: { FLEET_TOKEN: TOKEN, AMSYNC_TOKEN: TOKEN, ...env }, nodeFlags: config.cliNodeFlags ?? [], timeoutMs: 1_800_000 });
    const clearAll = (among: readonly string[]) => eachTenant(among, (n) => emu.control(n, 'DELETE', 'requests').then(() => undefined));

    // The slowest single target's listing, each of a few listed alone.
    const sampled = [...new Set([fleetNames[0]!, fleetNames[Math.floor(fleetNames.length / 2)]!, fleetNames[fleetNames.length - 1]!])];
    let singleListMs = 0;
    for (const name of sampled) {
      const single = await amsync(['plan', '-f', 'noop.yaml', '--url', `${emu.url}/t/${name}`, '--json']);
      if (single.code !== 0) throw new Error(`single plan of ${name} exited ${single.code}: ${single.stderr.slice(-500)}`);
      singleListMs = Math.max(singleListMs, listSpanMs(await emu.requests(name)));
      await emu.control(name, 'DELETE', 'requests');
    }

    const fleetRun = async (count: number, args: string[], expectChanged: number, env: Record<string, string> = {}): Promise<FleetRun> => {
      const among = names.slice(0, count);
      await clearAll(among);
      const emulatorBefore = emu.cpuMs();
      const run = await amsync([...args, '--targets', targetsFile(count), '--target-concurrency', String(size.concurrency), '--json'], env);
      const emulatorCpuMs = emu.cpuMs() - emulatorBefore;
      if (run.code !== 0 && run.code !== 2) throw new Error(`the fleet run exited ${run.code}: ${run.stderr.slice(-1000)}`);
      const doc = JSON.parse(run.stdout) as { summary: { changed: number; failed: number } };
      if (doc.summary.changed !== expectChanged) throw new Error(`expected ${expectChanged} targets with changes, got ${JSON.stringify(doc.summary)}`);
      const callsPerTarget: number[] = [];
      await eachTenant(among, async (n) => {
        callsPerTarget.push((await emu.requests(n)).length);
      });
      return { run, callsPerTarget, failed: doc.summary.failed, emulatorCpuMs };
    };

    // How CPU and memory grow with the fleet: the no-op at each size, smallest first.
    const points: GrowthPoint[] = [];
    // Each size twice, the smaller CPU kept: a busy spell of the shared machine inflates a run's
    // CPU (caches, frequency), never deflates it.
    for (const count of growth) {
      log(`12 fleet: growth, no-op plan of ${count} targets, twice`);
      const runs = [await fleetRun(count, ['plan', '-f', 'noop.yaml'], 0), await fleetRun(count, ['plan', '-f', 'noop.yaml'], 0)].map((r) => r.run);
      points.push({
        targets: count,
        cpuMs: Math.min(...runs.map((r) => r.cpuMs ?? Number.NaN)),
        maxRssMb: Math.max(...runs.map((r) => (r.maxRssKb ?? Number.NaN) / 1024)),
        wallMs: Math.min(...runs.map((r) => r.wallMs)),
        cpuMsRuns: runs.map((r) => r.cpuMs ?? Number.NaN),
      });
    }

    log(`12 fleet: bare node:http listing of the ${size.targets} targets (the floor of the CPU)`);
    const bare = await runNode([bareFleetListing, emu.url, TOKEN, '100', String(size.targets), String(size.concurrency)], { cwd: dir, env: {} });
    if (bare.code !== 0) throw new Error(`the bare fleet listing exited with ${bare.code}: ${bare.stderr.slice(-1000)}`);
    const bareListed = JSON.parse(bare.stdout) as { items: number; pages: number };
    if (bareListed.items !== 2 * size.items * size.targets) throw new Error(`the bare fleet listing saw ${bare.stdout.trim()}`);
    log(`12 fleet: the same listing by got, set up as amsync's transport (the floor of a client on got)`);
    const bareGot = await runNode([bareFleetListing, emu.url, TOKEN, '100', String(size.targets), String(size.concurrency), 'got'], { cwd: dir, env: {} });
    if (bareGot.code !== 0) throw new Error(`the bare got fleet listing exited with ${bareGot.code}: ${bareGot.stderr.slice(-1000)}`);
    if ((JSON.parse(bareGot.stdout) as { items: number }).items !== bareListed.items) throw new Error(`the bare got fleet listing saw ${bareGot.stdout.trim()}`);
    const start = await runNode(['-e', '0'], { cwd: dir, env: {} });

    log('12 fleet: no-op plan of every target');
    const noop = await fleetRun(size.targets, ['plan', '-f', 'noop.yaml'], 0);
    log('12 fleet: sync with 10 % drift on every target');
    const synced = await fleetRun(size.targets, ['sync', '-f', 'drift.yaml', '--state-file', 'state/state.json'], size.targets);
    // The same drift again, each target's limiter starting at 100 writes/s instead of 10: what
    // the wall of the first owes to every client finding its service's rate from scratch.
    await eachTenant(fleetNames, async (name) => {
      await emu.control(name, 'POST', 'reset');
      await emu.control(name, 'POST', 'seed', { count: { sshUsers: size.items, apikeys: size.items }, returnItems: false });
    });
    log('12 fleet: the same drift, AMSYNC_INITIAL_RATE=100');
    const fast = await fleetRun(size.targets, ['sync', '-f', 'drift.yaml', '--state-file', 'state/state.json'], size.targets, { AMSYNC_INITIAL_RATE: '100' });

    const pages = 2 * Math.max(1, Math.ceil(size.items / 100));
    const driftMinimum = pages + changeCount(drift) + applyReads(drift);
    const maxRatio = (calls: number[], minimum: number) => Math.max(...calls) / minimum;
    const scenario = `12 fleet ${size.targets}×${2 * size.items}`;
    const ms = (n: number | undefined) => (n === undefined ? Number.NaN : n);
    const floorOf = (run: MeasuredCliRun) => Math.max(singleListMs, ms(run.cpuMs) / amsyncCores);
    const floorNote = (run: MeasuredCliRun) =>
      `floor = max(slowest single listing ${singleListMs.toFixed(0)} ms, amsync's CPU ${(ms(run.cpuMs) / 1000).toFixed(2)} s ÷ ${amsyncCores} core): a fleet is bound by its slowest target's round trips or by its one event loop, whichever is longer; wall ${(run.wallMs / 1000).toFixed(2)} s`;
    const emulatorNote = (r: FleetRun) => `the emulator (its own process) used ${(r.emulatorCpuMs / 1000).toFixed(1)} s of CPU beside it, on the same ${availableParallelism()} cores`;
    const bareCpuPerTarget = ms(bare.cpuMs) / size.targets;
    const cpuPerTarget = ms(noop.run.cpuMs) / size.targets;
    figures.push(
      figure({ id: 'fleet.single.listMs', scenario, label: 'slowest single target: listing time (alone)', value: singleListMs, decimals: 0, unit: 'ms' }),
      figure({ id: 'fleet.noop.wallMs', scenario, label: `no-op plan, --target-concurrency ${size.concurrency}: wall`, value: noop.run.wallMs, decimals: 0, unit: 'ms' }),
      figure({
        id: 'fleet.noop.wallPerFloor',
        scenario,
        label: `no-op: fleet wall ÷ max(slowest single listing, CPU ÷ ${amsyncCores} core)`,
        value: noop.run.wallMs / floorOf(noop.run),
        decimals: 2,
        target: { op: '<=', value: 1.2 },
        note: `${floorNote(noop.run)}; ${emulatorNote(noop)}`,
      }),
      figure({
        id: 'fleet.noop.cpuMsPerTarget',
        scenario,
        label: `no-op: amsync's CPU per target (${(ms(noop.run.cpuMs) / 1000).toFixed(2)} s ÷ ${size.targets}, node's start included)`,
        value: cpuPerTarget,
        decimals: 2,
        unit: 'ms',
        target: { op: '<=', value: 2 },
        note: `the amsync process alone (getrusage at its exit); the emulator runs in a process of its own. User ${(ms(noop.run.userCpuMs) / 1000).toFixed(2)} s, system ${(ms(noop.run.systemCpuMs) / 1000).toFixed(2)} s`,
      }),
      figure({
        id: 'fleet.bare.cpuMsPerTarget',
        scenario,
        label: `floor: bare node:http + JSON.parse listing of the same targets, CPU per target (${(ms(bare.cpuMs) / 1000).toFixed(2)} s ÷ ${size.targets}, node's start ${ms(start.cpuMs).toFixed(0)} ms included)`,
        value: bareCpuPerTarget,
        decimals: 2,
        unit: 'ms',
        note: `test/bench/bare-fleet-listing.mjs: an agent per target, ${bareListed.pages} pages, ${size.concurrency} targets at a time, nothing else; peak RSS ${(ms(bare.maxRssKb) / 1024).toFixed(0)} MB`,
      }),
      figure({ id: 'fleet.noop.cpuPerBare', scenario, label: 'no-op: amsync CPU per target ÷ the bare listing\'s', value: cpuPerTarget / bareCpuPerTarget, decimals: 2, unit: '×' }),
      figure({
        id: 'fleet.bareGot.cpuMsPerTarget',
        scenario,
        label: `floor with got: the same listing by got as amsync's transport sets it up, CPU per target (${(ms(bareGot.cpuMs) / 1000).toFixed(2)} s ÷ ${size.targets}, node's start included)`,
        value: ms(bareGot.cpuMs) / size.targets,
        decimals: 2,
        unit: 'ms',
        note: `test/bench/bare-fleet-listing.mjs … got (test/bench/bare-get.mjs): one got instance with the transport's options, a stream per page, an agent per target, JSON.parse, nothing else; got is amsync's HTTP client (a fixed dependency), so this is what any amsync fleet pays before it validates or plans anything; peak RSS ${(ms(bareGot.maxRssKb) / 1024).toFixed(0)} MB`,
      }),
      figure({ id: 'fleet.noop.cpuPerBareGot', scenario, label: 'no-op: amsync CPU per target ÷ the got listing\'s', value: cpuPerTarget / (ms(bareGot.cpuMs) / size.targets), decimals: 2, unit: '×' }),
      figure({ id: 'fleet.noop.maxRssMb', scenario, label: 'no-op: peak RSS', value: ms(noop.run.maxRssKb) / 1024, decimals: 0, unit: 'MB', target: { op: '<=', value: 512 } }),
      figure({ id: 'fleet.noop.callsPerMinimum', scenario, label: 'no-op: requests per target ÷ minimum (worst target)', value: maxRatio(noop.callsPerTarget, pages), decimals: 2, target: { op: '=', value: 1 } }),
      figure({ id: 'fleet.drift.wallMs', scenario, label: `sync, 10 % drift (${changeCount(drift)} changes a target): wall`, value: synced.run.wallMs, decimals: 0, unit: 'ms' }),
      figure({
        id: 'fleet.drift.wallPerFloor',
        scenario,
        label: `drift: fleet wall ÷ max(slowest single listing, CPU ÷ ${amsyncCores} core)`,
        value: synced.run.wallMs / floorOf(synced.run),
        decimals: 2,
        note: `${floorNote(synced.run)}; each target's writes also wait for its limiter (it starts at 10 writes/s: 20 PUTs take ~2 s a target, ${Math.ceil(size.targets / size.concurrency)} rounds of ${size.concurrency}); ${emulatorNote(synced)}`,
      }),
      figure({ id: 'fleet.drift.cpuMsPerTarget', scenario, label: 'drift: CPU per target', value: ms(synced.run.cpuMs) / size.targets, decimals: 1, unit: 'ms' }),
      figure({ id: 'fleet.drift.maxRssMb', scenario, label: 'drift: peak RSS', value: ms(synced.run.maxRssKb) / 1024, decimals: 0, unit: 'MB', target: { op: '<=', value: 512 } }),
      figure({ id: 'fleet.drift.callsPerMinimum', scenario, label: 'drift: requests per target ÷ minimum (worst target)', value: maxRatio(synced.callsPerTarget, driftMinimum), decimals: 2, target: { op: '=', value: 1 } }),
      figure({ id: 'fleet.driftInitialRate100.wallMs', scenario, label: 'drift, AMSYNC_INITIAL_RATE=100: wall', value: fast.run.wallMs, decimals: 0, unit: 'ms' }),
      figure({
        id: 'fleet.driftInitialRate100.wallPerFloor',
        scenario,
        label: 'drift, AMSYNC_INITIAL_RATE=100: wall ÷ floor',
        value: fast.run.wallMs / floorOf(fast.run),
        decimals: 2,
        note: floorNote(fast.run),
      }),
      figure({ id: 'fleet.driftInitialRate100.callsPerMinimum', scenario, label: 'drift, AMSYNC_INITIAL_RATE=100: requests ÷ minimum', value: maxRatio(fast.callsPerTarget, driftMinimum), decimals: 2, target: { op: '=', value: 1 } }),
    );
    if (points.length >= 2) figures.push(...growthFigures(points));
    details.fleet = {
      size,
      latencyMs: config.latencyMs,
      amsyncCores,
      singleListMs,
      bare: { ...usageOf(bare), pages: bareListed.pages },
      bareGot: usageOf(bareGot),
      nodeStart: usageOf(start),
      growth: points,
      noop: { ...usageOf(noop.run), emulatorCpuMs: noop.emulatorCpuMs, calls: { min: Math.min(...noop.callsPerTarget), max: Math.max(...noop.callsPerTarget) }, minimum: pages },
      drift: { ...usageOf(synced.run), emulatorCpuMs: synced.emulatorCpuMs, calls: { min: Math.min(...synced.callsPerTarget), max: Math.max(...synced.callsPerTarget) }, minimum: driftMinimum },
      driftInitialRate100: { ...usageOf(fast.run), emulatorCpuMs: fast.emulatorCpuMs },
    };
  } finally {
    await emu.close();
  }
}

/** The no-op at each size: CPU and RSS per size, the slope of each, and how far from a line. */
function growthFigures(points: readonly GrowthPoint[]): Figure[] {
  const scenario = `12 fleet growth ${points.map((p) => p.targets).join(' → ')}`;
  const cpu = points.map((p) => [p.targets, p.cpuMs] as const);
  const rss = points.map((p) => [p.targets, p.maxRssMb] as const);
  const cpuFit = linearFit(cpu);
  const rssFit = linearFit(rss);
  const each = points.map((p) => `${p.targets}: CPU ${(p.cpuMs / 1000).toFixed(2)} s (runs ${p.cpuMsRuns.map((c) => (c / 1000).toFixed(2)).join(', ')}) (${(p.cpuMs / p.targets).toFixed(2)} ms a target), RSS ${p.maxRssMb.toFixed(0)} MB, wall ${(p.wallMs / 1000).toFixed(1)} s`).join('; ');
  return [
    ...points.map((p) =>
      figure({ id: `fleet.growth.${p.targets}.cpuMsPerTarget`, scenario, label: `no-op of ${p.targets} targets: CPU per target (RSS ${p.maxRssMb.toFixed(0)} MB)`, value: p.cpuMs / p.targets, decimals: 2, unit: 'ms' }),
    ),
    figure({
      id: 'fleet.growth.cpuMsPerAddedTarget',
      scenario,
      label: `CPU per added target (least-squares slope; fixed part ${(cpuFit.intercept / 1000).toFixed(2)} s)`,
      value: cpuFit.slope,
      decimals: 2,
      unit: 'ms',
      target: { op: '<=', value: 2 },
      note: each,
    }),
    ...(points.length < 3 ? [] : [figure({ id: 'fleet.growth.cpuMarginalRatio', scenario, label: 'CPU: cost of a step\'s added targets ÷ the first step\'s, largest (1 = linear)', value: marginalRatio(cpu), decimals: 2, target: { op: '<=', value: 1.25 } })]),
    figure({ id: 'fleet.growth.rssMbPerAddedTarget', scenario, label: `peak RSS per added target (slope; fixed part ${rssFit.intercept.toFixed(0)} MB)`, value: rssFit.slope * 1024, decimals: 0, unit: 'KB' }),
    ...(points.length < 3 ? [] : [figure({ id: 'fleet.growth.rssMarginalRatio', scenario, label: 'RSS: a step\'s added MB per target ÷ the first step\'s, largest (1 = linear)', value: marginalRatio(rss), decimals: 2 })]),
  ];
}
