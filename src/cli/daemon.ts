import { Option, type Command } from 'commander';
import type { AmClient, CredentialHandover } from '../api/index.js';
import type { DaemonDeps, DaemonRuntimeOptions, PendingApprovalsEvent, RunningDaemon, StopResult, LeaseElector } from '../daemon/index.js';
import type * as DaemonModuleType from '../daemon/index.js';
import type { DesiredState } from '../model/index.js';
import type { SyncOutcome } from '../sync/index.js';
import { UsageError } from '../errors.js';
import type { Logger, AmsyncMetrics } from '../obs/index.js';
import { parseLeaseRef } from '../settings/index.js';
import type { Settings } from '../settings/index.js';
import { notifyGraceMs, throwOnAuditFailure } from '../app/index.js';
import type { CommandContext } from './command-context.js';
import type { ServiceContext } from './service-context.js';

import type { CliIo, Env } from './io.js';
import { addConnectionOptions, addDeleteOptions, addFileOption, addLocalStateOptions, addWriterOptions, type ServiceOptions } from './shared-options.js';
import { version } from './version.js';
import { attachClientMetrics, auditTrigger, flushLogger, runSignal, runtimeOptions, startElection, stopWritesOf } from './daemon-helpers.js';
import { addFleetOptions, checkFleetFlags, resolveTargetsFile } from './fleet-options.js';
import type { FleetDaemonOptions } from './fleet-daemon.js';


function shardsFlag(value: string): number {
  const n = Number(value);
  if (!/^\d{1,4}$/.test(value) || n < 1) throw new UsageError(`Expected \`--shards\` to be a whole number from 1 upwards, got ${JSON.stringify(value)}`, 'bad_flag_value');
  return n;
}

/** Exit codes of a stop forced by a second signal: the shell's 128 + signal number. */
const forcedExitCodes = { SIGINT: 130, SIGTERM: 143, stop: 1 } as const;

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
  addDeleteOptions(addWriterOptions(addLocalStateOptions(addConnectionOptions(addFileOption(cmd)))))
    .option('--listen <HOST:PORT>', 'address of /healthz, /readyz and /metrics (AMSYNC_DAEMON_LISTEN; default 127.0.0.1:9477)')
    .option('--schedule <CRON>', 'drift-correcting re-sync; five cron fields, or six with seconds first (AMSYNC_DAEMON_SCHEDULE; default "*/5 * * * *")')
    .addOption(new Option('--mode <MODE>', 'apply: correct drift; observe: plan and report drift only (AMSYNC_DAEMON_MODE; default apply)').choices(['apply', 'observe']))
    .option('--leader-elect <lease:NAMESPACE/NAME>', 'several replicas: only the holder of this coordination.k8s.io/v1 Lease writes, the others observe (AMSYNC_LEADER_ELECT)')
    .option('--run-deadline-ms <MS>', 'abandon a run still going after this long: its requests are cancelled, /healthz and /readyz report it (AMSYNC_DAEMON_RUN_DEADLINE_MS; default 600000)')
    .option(
      '--approvals <FILE>',
      'a YAML or JSON list of approval hashes, watched: a change the policy gates is applied once its hash (or its set\'s) is listed; until then it is pending, never applied by the daemon itself (AMSYNC_DAEMON_APPROVALS_FILE)',
    );
  // Fleet (DESIGN.md §9): every target of a targets file, sharded across replicas.
  addFleetOptions(cmd)
    .option('--shards <N>', "with --targets: run the targets rendezvous hashing gives this replica's shard of N; the shard is the ordinal the pod name ends in (a StatefulSet's)", shardsFlag)
    .option('--shard <I/N>', 'with --targets: this replica is shard I of N (instead of --shards)')
    .action(async (opts: FleetDaemonOptions) => {
      const targetsFile = resolveTargetsFile(opts, ctx.io.env);
      checkFleetFlags(opts, targetsFile);
      if (targetsFile === undefined && (opts.shards !== undefined || opts.shard !== undefined)) {
        throw new UsageError('--shards and --shard split the targets of a fleet between replicas: give the targets file with --targets FILE', 'conflicting_flags');
      }
      const code = targetsFile === undefined ? await runDaemon(opts, ctx.io) : await (await import('./fleet-daemon.js')).runFleetDaemon(opts, ctx.io, targetsFile);
      if (code !== 0) ctx.setExitCode(code);
    });
}

/** Runs the daemon until it stops; returns the exit code. Its signals stay the process's own (daemon/signals.ts). */
export async function runDaemon(opts: ServiceOptions, io: CliIo): Promise<number> {
  // Loaded here, not at start: no other command needs the watcher, the scheduler or prom-client.
  const [daemonModule, { createMetrics }, { createServiceContext, renewalGraceMs }] = await Promise.all([
    import('../daemon/index.js'),
    import('../obs/metrics.js'),
    import('./service-context.js'),
  ]);
  const metrics = createMetrics({ version, processMetrics: true });
  // A rotated key that cannot be written back is kept while the daemon lives, which turns not ready.
  const makeContext = (logger?: Logger, credentialFrom?: CredentialHandover) =>
    createServiceContext(opts, io, { notificationMetrics: metrics, keepUnpersistedKey: true, ...(logger ? { logger } : {}), ...(credentialFrom ? { credentialFrom } : {}) });
  const command = new DaemonCommand(opts, io, metrics, await makeContext(), makeContext, renewalGraceMs);
  return command.run(daemonModule);
}

type DaemonModule = typeof DaemonModuleType;

/** The sidecar of one service: its context (replaced on SIGHUP), the Lease, and the daemon that runs them. */
class DaemonCommand {
  readonly #log: Logger;
  #detach: () => void = () => undefined;
  #elector: LeaseElector | undefined;
  #daemon: RunningDaemon | undefined;

  constructor(
    private readonly opts: ServiceOptions,
    private readonly io: CliIo,
    private readonly metrics: AmsyncMetrics,
    private service: ServiceContext,
    private readonly makeContext: (logger?: Logger, credentialFrom?: CredentialHandover) => Promise<ServiceContext>,
    private readonly renewalGraceMs: number,
  ) {
    this.#log = service.logger.child({ component: 'daemon' });
  }

  async run({ DaemonError, startDaemon }: DaemonModule): Promise<number> {
    try {
      // A missing URL or token is a usage error (64), found before anything starts.
      this.#detach = attachClientMetrics(this.service.client(), this.metrics);
      // So is a state folder, tokensDir or audit log it could not write (exit 1): not one unexpected failure per run.
      await this.service.checkLocalOutputs({ writes: this.service.settings.daemon.mode === 'apply' });
      this.#elector = await startLeaderElection(this.service.settings, this.io.env, this.metrics, this.#log, (leading, message) => this.#onLeadership(leading, message));
      this.#daemon = await startDaemon(this.#deps());
    } catch (error) {
      await this.#elector?.stop();
      this.service.close();
      // The settings rules check these values already; anything left is still a bad option.
      if (error instanceof DaemonError && error.code === 'daemon_options') throw new UsageError(error.message, 'bad_flag_value', { cause: error });
      throw error;
    }
    const result: StopResult = await this.#daemon.stopped;
    await this.#elector?.stop();
    await this.service.closeNotifier(notifyGraceMs);
    this.service.close();
    await flushLogger(this.service.logger);
    if (result.forced) return forcedExitCodes[result.reason];
    return result.finished ? 0 : 1;
  }

  #deps(): DaemonDeps {
    const elector = this.#elector;
    return {
      loadDesired: () => this.service.loadDesired(),
      sync: (desired, options) => this.#sync(desired, options),
      onApprovalsPending: (event) => this.#onApprovalsPending(event),
      ...(elector ? { mayWrite: () => elector.leading } : {}),
      // The context of the moment: a settings reload brings its own webhooks.
      notify: (event) => this.service.notify(event),
      // Between runs (the daemon calls it in a run of its own): no sync uses the old context.
      reloadSettings: () => this.#reloadSettings(),
      // The client of the moment: a settings reload replaces it.
      credentialStatus: () => this.service.client().credentialStatus(),
      onWire: () => this.service.onWire(),
      logger: this.#log,
      metrics: this.metrics,
      options: { file: this.service.file, watch: this.service.source.paths, ...this.service.settings.daemon },
      ...(this.io.signals ? { signals: this.io.signals } : {}),
      ...(this.io.scheduler ? { scheduler: this.io.scheduler } : {}),
    };
  }

  /**
   * A replica that does not hold the Lease observes; losing the Lease mid-run aborts the term's
   * signal: no write starts after it, and the requests of a writing run in flight are cancelled
   * too, so none outlives the lease into a new leader's term (the elector steps down at its
   * renew deadline, before the lease can expire for the others).
   */
  async #sync(desired: DesiredState, options: Parameters<DaemonDeps['sync']>[1]): Promise<SyncOutcome> {
    const term = this.#elector?.term;
    const outcome = await this.service.sync(desired, {
      dryRun: options.dryRun,
      pruneAll: this.opts.prune,
      signal: runSignal(options.signal, term, options.dryRun),
      approvals: options.approvals,
      trigger: auditTrigger(options.reasons),
      // SIGTERM, or the end of the term for a run that writes (a replica that does not lead still
      // plans): nothing more is sent (queued writes are cancelled), what was sent finishes.
      stopWrites: stopWritesOf(options.stop, options.dryRun ? undefined : term),
      // The Lease fences each write as it is sent: a leader paused past its renew deadline sends none of what it had queued.
      ...(term ? { writeFence: this.#elector!.fence } : {}),
    });
    // A result line the audit log lost fails the run (its health and webhooks say so), though the writes happened.
    throwOnAuditFailure(this.service.auditTrail());
    return outcome;
  }

  #onLeadership(leading: boolean, message: string): void {
    this.service.notify({ event: 'leadership_changed', message });
    // A new leader corrects drift at once rather than at the next scheduled run.
    if (leading) this.#daemon?.trigger('leader');
  }

  /** Changes that wait for an approval, announced once each: logged, and told to the webhooks. */
  #onApprovalsPending(event: PendingApprovalsEvent): void {
    this.#log.info({ setHash: event.setHash, approve: event.approve, added: event.added.map((p) => p.hash) }, 'approvals pending');
    const n = event.pending.length;
    this.service.notify({
      event: 'approvals_pending',
      changes: event.pending.map((p) => ({ kind: p.kind, action: p.action, key: p.key })),
      summary: { pending: n, added: event.added.length },
      message: `${n} change${n === 1 ? '' : 's'} wait for an approval: list ${event.approve.length === 1 && event.approve[0] === event.setHash ? `${event.setHash} (all) or a change's hash` : event.approve.join(', ')} in the approvals file`,
    });
  }

  async #reloadSettings(): Promise<Partial<DaemonRuntimeOptions>> {
    const logger = this.service.logger;
    // The key goes on as it stands: a renewal in flight settles first (bounded; its answer may
    // carry a rotated key), then the new client takes the key over rather than reading a file
    // that may hold a retired one (a rotated key the daemon could not write back).
    const credentialFrom = await this.service.client().handOverCredential(this.renewalGraceMs);
    const next = await this.makeContext(logger, credentialFrom);
    // Children take their level when made: set both, before the new client's logger is made.
    const previousLevel = logger.level;
    logger.level = next.settings.logLevel;
    this.#log.level = next.settings.logLevel;
    let client: AmClient;
    try {
      client = next.client();
    } catch (error) {
      logger.level = previousLevel;
      this.#log.level = previousLevel;
      next.close();
      throw error;
    }
    const previous = this.service;
    this.#detach();
    this.service = next;
    await previous.closeNotifier(notifyGraceMs);
    previous.close();
    this.#detach = attachClientMetrics(client, this.metrics);
    if (next.settings.daemon.listen !== previous.settings.daemon.listen) this.#log.warn('a new listen address takes effect at the next restart');
    return runtimeOptions(next.settings);
  }
}


/** `--leader-elect lease:NS/NAME`: only the holder writes; the other replicas observe. */
async function startLeaderElection(settings: Settings, env: Env, metrics: AmsyncMetrics, log: Logger, onChange: (leading: boolean, message: string) => void): Promise<LeaseElector | undefined> {
  const ref = settings.daemon.leaderElect === undefined ? undefined : parseLeaseRef(settings.daemon.leaderElect);
  if (!ref) return undefined;
  return startElection(ref, env, metrics, log, { leading: 'this replica writes', following: 'this replica only observes' }, onChange);
}
