import type { Command } from 'commander';
import type { StopResult } from '../daemon/index.js';
import { UsageError } from '../errors.js';
import { resolveShard } from '../fleet/index.js';
import type { CommandContext } from './command-context.js';
import { addFleetOptions, checkFleetFlags, defaultTargetConcurrency, fleetDesiredFile, resolveTargetsFile, type FleetOptions } from './fleet-options.js';
import type { CliIo } from './io.js';
import { resolveDesiredSource, resolveSettings } from '../settings/index.js';
import { addConnectionOptions, addDeleteOptions, addSettingFlags, addFileOption, addLocalStateOptions, addWriterOptions, type ServiceOptions } from './shared-options.js';
import { version } from './version.js';

export interface DaemonFlags extends ServiceOptions, FleetOptions {
  /** `--shards N`: this replica's shard is the ordinal its pod name ends in. */
  readonly shards?: number;
  /** `--shard I/N`. */
  readonly shard?: string;
}

function shardsFlag(value: string): number {
  const n = Number(value);
  if (!/^\d{1,4}$/.test(value) || n < 1) throw new UsageError(`Expected \`--shards\` to be a whole number from 1 upwards, got ${JSON.stringify(value)}`, 'bad_flag_value');
  return n;
}

/**
 * `amsync daemon [-f FILE] [--listen HOST:PORT] [--schedule CRON] [--mode apply|observe]`:
 * the sidecar. Resolves when it has stopped; the exit code says how: 0 after a graceful
 * stop, 1 when a sync was still running at the end of the grace period, 130/143 when a
 * second signal cut the wait short (the entry then exits at once).
 */
export function registerDaemonCommand(program: Command, ctx: CommandContext): void {
  const cmd = program
    .command('daemon')
    .description('the sidecar: sync at start, on every change of the file or its secret files, and on a schedule; serve /healthz, /readyz and /metrics');
  addDeleteOptions(addWriterOptions(addLocalStateOptions(addConnectionOptions(addFileOption(cmd)))));
  addSettingFlags(cmd, '--listen', '--schedule', '--mode', '--socket', '--leader-elect', '--run-deadline-ms', '--approvals');
  // Fleet (README, "Fleet: one access file, many services"): every target of a targets file, sharded across replicas.
  addFleetOptions(cmd)
    .option('--shards <N>', "with --targets: run the targets rendezvous hashing gives this replica's shard of N; the shard is the ordinal the pod name ends in (a StatefulSet's)", shardsFlag)
    .option('--shard <I/N>', 'with --targets: this replica is shard I of N (instead of --shards)')
    .action(async (opts: DaemonFlags) => {
      const code = await runDaemon(opts, ctx.io);
      if (code !== 0) ctx.setExitCode(code);
    });
}

/** Runs the daemon until it stops; returns the exit code. Its signals stay the process's own (daemon/signals.ts). */
export async function runDaemon(opts: DaemonFlags, io: CliIo): Promise<number> {
  const env = io.env;
  const targetsFile = resolveTargetsFile(opts, env);
  checkFleetFlags(opts, targetsFile);
  if (targetsFile === undefined && (opts.shards !== undefined || opts.shard !== undefined)) {
    throw new UsageError('--shards and --shard split the targets of a fleet between replicas: give the targets file with --targets FILE', 'conflicting_flags');
  }
  const shard = targetsFile === undefined ? undefined : resolveShard(opts, env);
  const readSettings = () => resolveSettings(opts, env);
  const settings = await readSettings();
  let fleet;
  if (targetsFile !== undefined) {
    const desiredFile = fleetDesiredFile(opts, env);
    const targetConcurrency = opts.targetConcurrency ?? defaultTargetConcurrency;
    fleet = { targetsFile, desiredFile, target: opts.target, selector: opts.selector, shard, targetConcurrency };
  }
  // Loaded here, not at start: no other command needs the watcher, the scheduler or prom-client.
  const { serveDaemon } = await import('../daemon/index.js');
  const request = { settings, readSettings, source: resolveDesiredSource(opts, env), env, stderr: io.stderr, version, prune: opts.prune, signals: io.signals, scheduler: io.scheduler, fleet };
  return exitCodeOf(await serveDaemon(request));
}

/** Exit codes of a stop forced by a second signal: the shell's 128 + signal number. */
const forcedExitCodes = { SIGINT: 130, SIGTERM: 143, stop: 1 } as const;

/** 0 after a graceful stop, 1 when a run was still going at the end of the grace period, 130/143 when a second signal cut the wait short. */
function exitCodeOf(result: StopResult): number {
  if (result.forced) return forcedExitCodes[result.reason];
  return result.finished ? 0 : 1;
}

