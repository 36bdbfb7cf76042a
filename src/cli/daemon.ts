import { Option, type Command } from 'commander';
import type { AmClient, CredentialEvent } from '../api/index.js';
import type { DaemonRuntimeOptions, RunningDaemon, StopResult, LeaseElector } from '../daemon/index.js';
import { UsageError } from '../errors.js';
import type { Logger, AmsyncMetrics, ClientMetrics } from '../obs/index.js';
import { hostname } from 'node:os';
import { systemTimers } from '../time/index.js';
import { parseLeaseRef } from '../settings/index.js';
import type { Settings } from '../settings/index.js';
import type { CommandContext } from './command-context.js';

import type { CliIo, Env } from './io.js';
import { addConnectionOptions, addDeleteOptions, addFileOption, addLocalStateOptions, addWriterOptions, type ServiceOptions } from './shared-options.js';
import { version } from './version.js';


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
    .action(async (opts: ServiceOptions) => {
      const code = await runDaemon(opts, ctx.io);
      if (code !== 0) ctx.setExitCode(code);
    });
}

/** Runs the daemon until it stops; returns the exit code. Its signals stay the process's own (daemon/signals.ts). */
export async function runDaemon(opts: ServiceOptions, io: CliIo): Promise<number> {
  // Loaded here, not at start: no other command needs the watcher, the scheduler or prom-client.
  const [{ DaemonError, startDaemon }, { createMetrics }, { createServiceContext }] = await Promise.all([
    import('../daemon/index.js'),
    import('../obs/metrics.js'),
    import('./service-context.js'),
  ]);
  let service = await createServiceContext(opts, io);
  const logger = service.logger;
  const log = logger.child({ component: 'daemon' });
  const metrics = createMetrics({ version, processMetrics: true });
  let detach: () => void;
  try {
    // A missing URL or token is a usage error (64), found before anything starts.
    detach = attachClientMetrics(service.client(), metrics);
  } catch (error) {
    service.close();
    throw error;
  }

  let elector: LeaseElector | undefined;
  let daemon: RunningDaemon | undefined;
  try {
    elector = await startLeaderElection(service.settings, io.env, metrics, log, () => daemon?.trigger('leader'));
    daemon = await startDaemon({
      loadDesired: () => service.loadDesired(),
      // A replica that does not hold the Lease observes; losing the Lease mid-run aborts the
      // term's signal, so no write starts after it.
      sync: (desired, options) =>
        service.sync(desired, { dryRun: options.dryRun, pruneAll: opts.prune, signal: options.signal, ...(elector ? { stopWrites: elector.term } : {}) }),
      ...(elector ? { mayWrite: () => elector!.leading } : {}),
      // Between runs (the daemon calls it in a run of its own): no sync uses the old context.
      reloadSettings: async (): Promise<Partial<DaemonRuntimeOptions>> => {
        const next = await createServiceContext(opts, io, { logger });
        // Children take their level when made: set both, before the new client's logger is made.
        const previousLevel = logger.level;
        logger.level = next.settings.logLevel;
        log.level = next.settings.logLevel;
        let client: AmClient;
        try {
          client = next.client();
        } catch (error) {
          logger.level = previousLevel;
          log.level = previousLevel;
          next.close();
          throw error;
        }
        const previousListen = service.settings.daemon.listen;
        detach();
        service.close();
        service = next;
        detach = attachClientMetrics(client, metrics);
        if (next.settings.daemon.listen !== previousListen) log.warn('a new listen address takes effect at the next restart');
        return runtimeOptions(next.settings);
      },
      // The client of the moment: a settings reload replaces it.
      credentialStatus: () => service.client().credentialStatus(),
      logger: log,
      metrics,
      options: { file: service.file, ...service.settings.daemon },
      ...(io.signals ? { signals: io.signals } : {}),
      ...(io.scheduler ? { scheduler: io.scheduler } : {}),
    });
  } catch (error) {
    await elector?.stop();
    service.close();
    // The settings rules check these values already; anything left is still a bad option.
    if (error instanceof DaemonError && error.code === 'daemon_options') throw new UsageError(error.message, 'bad_flag_value', { cause: error });
    throw error;
  }

  const result: StopResult = await daemon.stopped;
  await elector?.stop();
  service.close();
  await flush(logger);
  if (result.forced) return forcedExitCodes[result.reason];
  return result.finished ? 0 : 1;
}

/**
 * `--leader-elect lease:NS/NAME`: the elector runs beside the daemon for its whole life.
 * The identity is the pod's name (POD_NAME from the downward API, else HOSTNAME, which
 * Kubernetes sets to the pod name), so a restarted pod of a StatefulSet keeps its claim.
 */
async function startLeaderElection(settings: Settings, env: Env, metrics: AmsyncMetrics, log: Logger, onLeading: () => void): Promise<LeaseElector | undefined> {
  const ref = settings.daemon.leaderElect === undefined ? undefined : parseLeaseRef(settings.daemon.leaderElect);
  if (!ref) return undefined;
  const identity = env.POD_NAME || env.HOSTNAME || hostname();
  const [{ kubeLeaseStore }, { LeaseElector }] = await Promise.all([import('../daemon/kube-lease-store.js'), import('../daemon/lease-elector.js')]);
  const store = await kubeLeaseStore({ ref });
  const elector = new LeaseElector({
    store,
    identity,
    timers: systemTimers,
    onChange: (leading, detail) => {
      metrics.setLeader(leading);
      // A new leader corrects drift at once rather than at the next scheduled run.
      if (leading) onLeading();
      if (leading) log.info({ lease: store.describe, identity }, `leading: ${detail}; this replica writes`);
      else log.warn({ lease: store.describe, identity }, `not leading: ${detail}; this replica only observes`);
    },
    onError: (error) => log.warn({ lease: store.describe, err: errorMessage(error) }, 'leader election: the Lease could not be read or written; retrying'),
  });
  metrics.setLeader(false);
  await elector.start();
  return elector;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function runtimeOptions(settings: Settings): Partial<DaemonRuntimeOptions> {
  const { schedule, mode, debounceMs, shutdownGraceMs, runDeadlineMs } = settings.daemon;
  return { schedule, mode, debounceMs, shutdownGraceMs, runDeadlineMs };
}

/** The client's events feed the metrics; returns the unsubscribe. */
function attachClientMetrics(client: AmClient, metrics: ClientMetrics): () => void {
  const onRequest = (e: { method: string; route: string; status: number | undefined; error: string | undefined; durationMs: number; rate: number }) => {
    metrics.observeApiRequest({ method: e.method, route: e.route, status: e.status, error: e.error, durationMs: e.durationMs });
    metrics.setLimiterRate(client.limiter.rate);
  };
  const onRetry = (e: { method: string; route: string; reason: string }) => metrics.observeRetry({ method: e.method, route: e.route, reason: e.reason });
  const onThrottle = (e: { method: string; route: string; status: number; rate: number }) => {
    metrics.observeThrottle({ method: e.method, route: e.route, status: e.status });
    metrics.setLimiterRate(e.rate);
  };
  const onCredential = (e: CredentialEvent) => metrics.observeCredential(e);
  client.events.on('request', onRequest);
  client.events.on('retry', onRetry);
  client.events.on('throttle', onThrottle);
  client.events.on('credential', onCredential);
  metrics.setLimiterRate(client.limiter.rate);
  return () => {
    client.events.off('request', onRequest);
    client.events.off('retry', onRetry);
    client.events.off('throttle', onThrottle);
    client.events.off('credential', onCredential);
  };
}

/** Lets buffered log lines out before the entry exits; bounded, so a stuck transport cannot hold the exit. */
function flush(logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 1000);
    try {
      logger.flush(() => {
        clearTimeout(timer);
        resolve();
      });
    } catch {
      clearTimeout(timer);
      resolve();
    }
  });
}
