/** Runs of the benchmark scenarios: the emulator, the measured CLI, and the checks on what it printed. */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BenchConfig } from './bench-config.js';
import { runAmsync, type MeasuredCliRun } from './cli-process.js';
import { changeCount, changeMix, desiredYaml, passwordVariable, type ChangeMix } from './desired-file.js';
import { startEmulatorProcess, type EmulatorProcess } from './emulator-process.js';
import { requestStats, type RequestStats } from './request-stats.js';

export const TOKEN = 'bench-token';
export const PASSWORD = 'bench-password-0c7e';

type Log = (line: string) => void;
export const logOf = (config: BenchConfig): Log => config.log ?? (() => undefined);

/** A fresh emulator for one scenario: a child process, or in this process where the config says so. */
export async function withEmulator<T>(
  config: Pick<BenchConfig, 'emulatorInProcess'>,
  options: { latencyMs: number; rateLimit?: number | undefined; pageSizeMax?: number },
  use: (emu: EmulatorProcess) => Promise<T>,
): Promise<T> {
  const emu = await startEmulatorProcess({
    token: TOKEN,
    latencyMs: options.latencyMs,
    ...(options.rateLimit === undefined ? {} : { rateLimit: options.rateLimit }),
    pageSizeMax: options.pageSizeMax ?? 100,
    inProcess: config.emulatorInProcess === true,
  });
  try {
    return await use(emu);
  } finally {
    await emu.close();
  }
}

export interface SyncOutcome {
  readonly run: MeasuredCliRun;
  readonly stats: RequestStats;
}

/** `amsync sync` (not a dry-run) of a file that declares exactly what the service holds. */
export async function noopSync(emu: EmulatorProcess, config: BenchConfig, items: number, dir: string, how: NoopRun = {}): Promise<SyncOutcome> {
  await mkdir(dir, { recursive: true });
  await emu.reset();
  await emu.seed({ sshUsers: items, apikeys: items });
  await writeFile(join(dir, 'access.yaml'), desiredYaml(items));
  return noopAgain(emu, config, items, dir, how);
}

/** How a no-op run is made: the command, flags besides `-f access.yaml --json`, node flags. */
export interface NoopRun {
  /** @default 'sync' (not a dry-run) */
  readonly command?: 'sync' | 'plan';
  /** `--page-size`; null: none (the client's own choice). @default config.pageSize */
  readonly pageSize?: number | null;
  readonly args?: readonly string[];
  readonly nodeFlags?: readonly string[];
  /** @default runAmsync's */
  readonly timeoutMs?: number;
}

/** The same no-op sync once more, on the data and file already in place. */
export async function noopAgain(emu: EmulatorProcess, config: BenchConfig, items: number, dir: string, how: NoopRun = {}): Promise<SyncOutcome> {
  const pageSize = how.pageSize === undefined ? config.pageSize : how.pageSize;
  await emu.clearRequests();
  const args = [how.command ?? 'sync', '-f', 'access.yaml', '--json', ...(pageSize === null ? [] : ['--page-size', String(pageSize)]), ...(how.args ?? [])];
  const run = await amsync(emu, config, dir, args, how.nodeFlags ?? [], how.timeoutMs);
  const report = checkedReport(run);
  if (report.summary.unchanged !== 2 * items || report.summary.create + report.summary.update + report.summary.delete !== 0) {
    throw new Error(`the no-op sync planned changes: ${JSON.stringify(report.summary)}`);
  }
  return { run, stats: requestStats(await emu.requests()) };
}

export interface ApplyOutcome extends SyncOutcome {
  readonly mix: ChangeMix;
}

/** What one apply run is asked to do: `changes` over `items` seeded users and keys. */
export interface ApplyRun {
  readonly items: number;
  readonly changes: number;
  /** `--rate`; undefined: discovered. */
  readonly clientRate: number | undefined;
  /** `--concurrency`; undefined: the client's default. */
  readonly concurrency: number | undefined;
}

/** `amsync sync` of `run.changes` changes against a freshly seeded emulator; checks every change applied. */
export async function applyChanges(emu: EmulatorProcess, config: BenchConfig, run: ApplyRun, dir: string): Promise<ApplyOutcome> {
  await mkdir(dir, { recursive: true });
  const mix = changeMix(run.changes);
  await emu.reset();
  await emu.seed({ sshUsers: run.items, apikeys: run.items });
  await writeFile(join(dir, 'access.yaml'), desiredYaml(run.items, mix));
  await emu.clearRequests();
  const args = ['sync', '-f', 'access.yaml', '--json', '--page-size', String(config.pageSize), '--max-deletes', String(mix.userDeletes + mix.keyDeletes)];
  args.push('--state-file', join(dir, 'state.json'));
  if (run.clientRate !== undefined) args.push('--rate', String(run.clientRate));
  if (run.concurrency !== undefined) args.push('--concurrency', String(run.concurrency));
  const measured = await amsync(emu, config, dir, args);
  const report = checkedReport(measured);
  const applied = report.results?.filter((r) => r.status === 'applied').length ?? 0;
  if (applied !== changeCount(mix)) throw new Error(`expected ${changeCount(mix)} changes applied, got ${applied}: ${JSON.stringify(report.summary)}`);
  return { run: measured, stats: requestStats(await emu.requests()), mix };
}

export function amsync(emu: EmulatorProcess, config: BenchConfig, cwd: string, args: string[], nodeFlags: readonly string[] = [], timeoutMs?: number): Promise<MeasuredCliRun> {
  return runAmsync(args, {
    cwd,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    env: { AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN, [passwordVariable]: PASSWORD },
    nodeFlags: [...(config.cliNodeFlags ?? []), ...nodeFlags],
  });
}

export interface JsonReport {
  readonly summary: { create: number; update: number; delete: number; unchanged: number; unmanaged: number };
  readonly results?: readonly { status: string }[];
}

export function checkedReport(run: MeasuredCliRun): JsonReport {
  if (run.code === null) throw new Error(`amsync was killed after ${(run.wallMs / 1000).toFixed(0)} s (its time bound): ${run.stderr.slice(-1000)}`);
  if (run.code !== 0) throw new Error(`amsync exited with ${run.code}: ${run.stderr.slice(-2000)}`);
  return JSON.parse(run.stdout) as JsonReport;
}

export const pagesOf = (items: number, size: number): number => Math.max(1, Math.ceil(items / size));

