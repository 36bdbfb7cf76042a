import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { smallFleetSize, type BenchConfig } from './bench-config.js';
import { logOf, TOKEN } from './bench-runs.js';
import { runAmsync, type MeasuredCliRun } from './cli-process.js';
import { applyReads, changeCount, desiredYaml, noChanges, type ChangeMix } from './desired-file.js';
import { amsyncBin, type LoggedRequest } from './emulator-process.js';
import { figure, type Figure } from './figures.js';

/**
 * Scenario 12, fleet (issue 18, DESIGN.md §7): N targets × M items on one multi-tenant emulator
 * (a child process), a no-op `amsync plan --targets` and a sync with 10 % drift at
 * `--target-concurrency C`. Figures: fleet wall ÷ the slowest single target's listing time
 * (each of a few targets listed alone), CPU per target, peak RSS, requests per target ÷ the
 * minimum (pages, plus changes and the scope check with drift).
 */

interface TenantEmulator {
  readonly url: string;
  control(tenant: string, method: string, name: string, body?: unknown): Promise<unknown>;
  requests(tenant: string): Promise<LoggedRequest[]>;
  close(): Promise<void>;
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
}

export async function fleetScenario(config: BenchConfig, workDir: string, figures: Figure[], details: Record<string, unknown>): Promise<void> {
  const size = config.fleet ?? smallFleetSize;
  const log = logOf(config);
  const names = Array.from({ length: size.targets }, (_, i) => `t${i + 1}`);
  const dir = join(workDir, 'fleet');
  await mkdir(dir, { recursive: true });
  log(`12 fleet: ${size.targets} targets × ${2 * size.items} items, L = ${config.latencyMs} ms, --target-concurrency ${size.concurrency}`);
  const emu = await startTenants(size.targets, config.latencyMs);
  try {
    await eachTenant(names, async (name) => {
      await emu.control(name, 'POST', 'seed', { count: { sshUsers: size.items, apikeys: size.items }, returnItems: false });
      await emu.control(name, 'DELETE', 'requests');
    });
    const drift: ChangeMix = { ...noChanges, keyUpdates: Math.round((2 * size.items) / 10) };
    await writeFile(join(dir, 'noop.yaml'), desiredYaml(size.items));
    await writeFile(join(dir, 'drift.yaml'), desiredYaml(size.items, drift));
    await writeFile(join(dir, 'targets.yaml'), ['targets:', ...names.flatMap((n) => [`  - name: ${n}`, `    url: ${emu.url}/t/${n}`, '    token: { env: FLEET_TOKEN }'])].join('\n') + '\n');
    const amsync = (args: string[], env: Record<string, string> = {}) => runAmsync(args, { cwd: dir, env: { FLEET_TOKEN: TOKEN, AMSYNC_TOKEN: TOKEN, ...env }, nodeFlags: config.cliNodeFlags ?? [], timeoutMs: 900_000 });
    const clearAll = () => eachTenant(names, (n) => emu.control(n, 'DELETE', 'requests').then(() => undefined));

    // The slowest single target's listing, each of a few listed alone.
    const sampled = [...new Set([names[0]!, names[Math.floor(names.length / 2)]!, names[names.length - 1]!])];
    let singleListMs = 0;
    for (const name of sampled) {
      const single = await amsync(['plan', '-f', 'noop.yaml', '--url', `${emu.url}/t/${name}`, '--json']);
      if (single.code !== 0) throw new Error(`single plan of ${name} exited ${single.code}: ${single.stderr.slice(-500)}`);
      singleListMs = Math.max(singleListMs, listSpanMs(await emu.requests(name)));
      await emu.control(name, 'DELETE', 'requests');
    }

    const fleetRun = async (args: string[], expectChanged: number, env: Record<string, string> = {}): Promise<FleetRun> => {
      await clearAll();
      const run = await amsync([...args, '--targets', 'targets.yaml', '--target-concurrency', String(size.concurrency), '--json'], env);
      if (run.code !== 0 && run.code !== 2) throw new Error(`the fleet run exited ${run.code}: ${run.stderr.slice(-1000)}`);
      const doc = JSON.parse(run.stdout) as { summary: { changed: number; failed: number } };
      if (doc.summary.changed !== expectChanged) throw new Error(`expected ${expectChanged} targets with changes, got ${JSON.stringify(doc.summary)}`);
      const callsPerTarget: number[] = [];
      await eachTenant(names, async (n) => {
        callsPerTarget.push((await emu.requests(n)).length);
      });
      return { run, callsPerTarget, failed: doc.summary.failed };
    };

    log('12 fleet: no-op plan of every target');
    const noop = await fleetRun(['plan', '-f', 'noop.yaml'], 0);
    log('12 fleet: sync with 10 % drift on every target');
    const synced = await fleetRun(['sync', '-f', 'drift.yaml', '--state-file', 'state/state.json'], size.targets);
    // The same drift again, each target's limiter starting at 100 writes/s instead of 10: what
    // the wall of the first owes to every client finding its service's rate from scratch.
    await eachTenant(names, async (name) => {
      await emu.control(name, 'POST', 'reset');
      await emu.control(name, 'POST', 'seed', { count: { sshUsers: size.items, apikeys: size.items }, returnItems: false });
    });
    log('12 fleet: the same drift, AMSYNC_INITIAL_RATE=100');
    const fast = await fleetRun(['sync', '-f', 'drift.yaml', '--state-file', 'state/state.json'], size.targets, { AMSYNC_INITIAL_RATE: '100' });

    const pages = 2 * Math.max(1, Math.ceil(size.items / 100));
    const driftMinimum = pages + changeCount(drift) + applyReads(drift);
    const maxRatio = (calls: number[], minimum: number) => Math.max(...calls) / minimum;
    const scenario = `12 fleet ${size.targets}×${2 * size.items}`;
    const ms = (n: number | undefined) => (n === undefined ? Number.NaN : n);
    figures.push(
      figure({ id: 'fleet.single.listMs', scenario, label: 'slowest single target: listing time (alone)', value: singleListMs, decimals: 0, unit: 'ms' }),
      figure({ id: 'fleet.noop.wallMs', scenario, label: `no-op plan, --target-concurrency ${size.concurrency}: wall`, value: noop.run.wallMs, decimals: 0, unit: 'ms' }),
      figure({
        id: 'fleet.noop.wallPerSingleListing',
        scenario,
        label: 'no-op: fleet wall ÷ slowest single listing',
        value: noop.run.wallMs / singleListMs,
        decimals: 2,
        target: { op: '<=', value: 1.2 },
        note: `${size.targets} targets over ${size.concurrency} at a time is ${Math.ceil(size.targets / size.concurrency)} rounds of listings at least, plus node's start`,
      }),
      figure({ id: 'fleet.noop.cpuMsPerTarget', scenario, label: 'no-op: CPU per target', value: ms(noop.run.cpuMs) / size.targets, decimals: 1, unit: 'ms' }),
      figure({ id: 'fleet.noop.maxRssMb', scenario, label: 'no-op: peak RSS', value: ms(noop.run.maxRssKb) / 1024, decimals: 0, unit: 'MB' }),
      figure({ id: 'fleet.noop.callsPerMinimum', scenario, label: 'no-op: requests per target ÷ minimum (worst target)', value: maxRatio(noop.callsPerTarget, pages), decimals: 2, target: { op: '=', value: 1 } }),
      figure({ id: 'fleet.drift.wallMs', scenario, label: `sync, 10 % drift (${changeCount(drift)} changes a target): wall`, value: synced.run.wallMs, decimals: 0, unit: 'ms' }),
      figure({ id: 'fleet.drift.wallPerSingleListing', scenario, label: 'drift: fleet wall ÷ slowest single listing', value: synced.run.wallMs / singleListMs, decimals: 2 }),
      figure({ id: 'fleet.drift.cpuMsPerTarget', scenario, label: 'drift: CPU per target', value: ms(synced.run.cpuMs) / size.targets, decimals: 1, unit: 'ms' }),
      figure({ id: 'fleet.drift.maxRssMb', scenario, label: 'drift: peak RSS', value: ms(synced.run.maxRssKb) / 1024, decimals: 0, unit: 'MB' }),
      figure({ id: 'fleet.drift.callsPerMinimum', scenario, label: 'drift: requests per target ÷ minimum (worst target)', value: maxRatio(synced.callsPerTarget, driftMinimum), decimals: 2, target: { op: '=', value: 1 } }),
      figure({ id: 'fleet.driftInitialRate100.wallMs', scenario, label: 'drift, AMSYNC_INITIAL_RATE=100: wall', value: fast.run.wallMs, decimals: 0, unit: 'ms' }),
      figure({ id: 'fleet.driftInitialRate100.callsPerMinimum', scenario, label: 'drift, AMSYNC_INITIAL_RATE=100: requests ÷ minimum', value: maxRatio(fast.callsPerTarget, driftMinimum), decimals: 2, target: { op: '=', value: 1 } }),
    );
    details.fleet = {
      size,
      latencyMs: config.latencyMs,
      singleListMs,
      noop: { wallMs: noop.run.wallMs, cpuMs: noop.run.cpuMs, maxRssKb: noop.run.maxRssKb, calls: { min: Math.min(...noop.callsPerTarget), max: Math.max(...noop.callsPerTarget) }, minimum: pages },
      drift: { wallMs: synced.run.wallMs, cpuMs: synced.run.cpuMs, maxRssKb: synced.run.maxRssKb, calls: { min: Math.min(...synced.callsPerTarget), max: Math.max(...synced.callsPerTarget) }, minimum: driftMinimum },
      driftInitialRate100: { wallMs: fast.run.wallMs, cpuMs: fast.run.cpuMs, maxRssKb: fast.run.maxRssKb },
    };
  } finally {
    await emu.close();
  }
}
