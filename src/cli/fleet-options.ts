import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { checkedFlag, rules } from '../settings/index.js';
import type { Env } from './io.js';
import { resolveDesiredSource } from '../settings/index.js';

/**
 * The fleet's flags (README, "Fleet: one access file, many services"), kept apart from the single-service ones: `--targets FILE`
 * (or AMSYNC_TARGETS) turns a command into a fleet run over the services the file lists.
 */
export interface FleetOptions {
  readonly targets?: string;
  /** `--target NAME`, repeatable. */
  readonly target?: readonly string[];
  /** `--selector KEY=VALUE`, repeatable, ANDed. */
  readonly selector?: readonly string[];
  readonly targetConcurrency?: number;
}

/** Targets at once by default: enough to hide latency, few enough for a small runner. */
export const defaultTargetConcurrency = 8;

const collect = (value: string, previous: readonly string[] | undefined): string[] => [...(previous ?? []), value];

/**
 * `--targets` and, unless turned off, `--target`, `--selector` and `--target-concurrency`:
 * fleet runs that may cover part of the fleet (plan, sync, daemon) and their pieces elsewhere.
 */
export function addFleetOptions(cmd: Command, options: { readonly target?: boolean; readonly selector?: boolean; readonly concurrency?: boolean } = {}): Command {
  cmd.option('--targets <FILE>', 'targets file: run on every service it lists, each with its own client, state and lock (AMSYNC_TARGETS)');
  if (options.target !== false) cmd.option('--target <NAME>', 'with --targets: only this target (repeatable)', collect);
  if (options.selector !== false) cmd.option('--selector <KEY=VALUE>', 'with --targets: only targets with this label (repeatable; all must match)', collect);
  if (options.concurrency !== false) {
    cmd.option('--target-concurrency <N>', `with --targets: targets run at once at most (default ${defaultTargetConcurrency})`, checkedFlag('--target-concurrency', rules.int1));
  }
  return cmd;
}

/** The targets file: `--targets`, else AMSYNC_TARGETS, else none (a single service, as always). */
export function resolveTargetsFile(opts: Pick<FleetOptions, 'targets'>, env: Env): string | undefined {
  return opts.targets ?? (env.AMSYNC_TARGETS || undefined);
}

/**
 * Flags that only mean something with a targets file are refused without one (64), and the
 * single service's URL and credential flags are refused with one: each target has its own.
 */
export function checkFleetFlags(opts: FleetOptions & { readonly url?: string; readonly tokenFile?: string; readonly refreshTokenFile?: string }, targetsFile: string | undefined): void {
  if (targetsFile === undefined) {
    const used = [(opts.target?.length ?? 0) > 0 ? '--target' : '', (opts.selector?.length ?? 0) > 0 ? '--selector' : '', opts.targetConcurrency !== undefined ? '--target-concurrency' : ''].filter(Boolean);
    if (used.length > 0) throw new UsageError(`${used.join(', ')} select${used.length === 1 ? 's' : ''} targets of a fleet: give the targets file with --targets FILE (or AMSYNC_TARGETS)`, 'conflicting_flags');
    return;
  }
  const single = [opts.url !== undefined ? '--url' : '', opts.tokenFile !== undefined ? '--token-file' : '', opts.refreshTokenFile !== undefined ? '--refresh-token-file' : ''].filter(Boolean);
  if (single.length > 0) {
    throw new UsageError(`${single.join(', ')} name${single.length === 1 ? 's' : ''} one service; with --targets each target has its URL and credential in the targets file`, 'conflicting_flags');
  }
}

/**
 * The one desired-state file of a fleet run. Several files (teams) and a fleet do not combine
 * yet: each target would need the merge of every file, and a saved fleet plan records one file.
 */
export function fleetDesiredFile(opts: { readonly file?: string | readonly string[]; readonly recursive?: boolean }, env: Env): string {
  const source = resolveDesiredSource(opts, env);
  if (source.paths.length > 1 || source.recursive === true) {
    throw new UsageError('a fleet run (--targets) takes one desired-state file (-f FILE); several files or a folder are not supported with --targets yet', 'conflicting_flags');
  }
  return source.paths[0]!;
}

