import { Option, type Command } from 'commander';
import type { AmClient } from '../api/index.js';
import type { DaemonRuntimeOptions, StopResult } from '../daemon/index.js';
import { UsageError } from '../errors.js';
import type { Logger } from '../obs/logger.js';
import type { ClientMetrics } from '../obs/metrics.js';
import type { Settings } from '../settings/index.js';
import type { CommandContext } from './commands.js';
import { addServiceOptions, type ServiceOptions } from './shared-options.js';
import { version } from './version.js';

type Env = Readonly<Record<string, string | undefined>>;

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
  addServiceOptions(cmd)
    .option('--listen <HOST:PORT>', 'address of /healthz, /readyz and /metrics (AMSYNC_DAEMON_LISTEN; default 127.0.0.1:9477)')
    .option('--schedule <CRON>', 'drift-correcting re-sync; five cron fields, or six with seconds first (AMSYNC_DAEMON_SCHEDULE; default "*/5 * * * *")')
    .addOption(new Option('--mode <MODE>', 'apply: correct drift; observe: plan and report drift only (AMSYNC_DAEMON_MODE; default apply)').choices(['apply', 'observe']))
    .action(async (opts: ServiceOptions) => {
      const code = await runDaemon(opts, process.env);
      if (code !== 0) ctx.setExitCode(code);
    });
}

/** Runs the daemon until it stops; returns the exit code. */
export async function runDaemon(opts: ServiceOptions, env: Env): Promise<number> {
  // Loaded here, not at start: no other command needs the watcher, the scheduler or prom-client.
  const [{ DaemonError, startDaemon }, { createMetrics }, { createServiceContext }] = await Promise.all([
    import('../daemon/index.js'),
    import('../obs/metrics.js'),
    import('./service-context.js'),
  ]);
  let service = await createServiceContext(opts, env);
  const logger = service.logger;
  const log = logger.child({ component: 'daemon' });
  warnIgnoredFlags(opts, log);
  const metrics = createMetrics({ version, processMetrics: true });
  let detach: () => void;
  try {
    // A missing URL or token is a usage error (64), found before anything starts.
    detach = attachClientMetrics(service.client(), metrics);
  } catch (error) {
    service.close();
    throw error;
  }

  let daemon;
  try {
    daemon = await startDaemon({
      loadDesired: () => service.loadDesired(),
      sync: (desired, options) => service.sync(desired, { dryRun: options.dryRun, pruneAll: opts.prune }),
      // Between runs (the daemon calls it in a run of its own): no sync uses the old context.
      reloadSettings: async (): Promise<Partial<DaemonRuntimeOptions>> => {
        const next = await createServiceContext(opts, env, { logger });
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
      logger: log,
      metrics,
      options: { file: service.file, ...service.settings.daemon },
    });
  } catch (error) {
    service.close();
    // The settings rules check these values already; anything left is still a bad option.
    if (error instanceof DaemonError && error.code === 'daemon_options') throw new UsageError(error.message, 'bad_flag_value', { cause: error });
    throw error;
  }

  const result: StopResult = await daemon.stopped;
  service.close();
  await flush(logger);
  if (result.forced) return forcedExitCodes[result.reason];
  return result.finished ? 0 : 1;
}

function runtimeOptions(settings: Settings): Partial<DaemonRuntimeOptions> {
  const { schedule, mode, debounceMs, shutdownGraceMs } = settings.daemon;
  return { schedule, mode, debounceMs, shutdownGraceMs };
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
  client.events.on('request', onRequest);
  client.events.on('retry', onRetry);
  client.events.on('throttle', onThrottle);
  metrics.setLimiterRate(client.limiter.rate);
  return () => {
    client.events.off('request', onRequest);
    client.events.off('retry', onRetry);
    client.events.off('throttle', onThrottle);
  };
}

/** Flags of the shared set that mean nothing to a daemon: say so rather than ignore them silently. */
function warnIgnoredFlags(opts: ServiceOptions, log: Logger): void {
  const ignored = [
    opts.out !== undefined ? '--out' : '',
    opts.detailedExitcode ? '--detailed-exitcode' : '',
    opts.json ? '--json' : '',
    opts.format !== undefined ? '--format' : '',
  ].filter(Boolean);
  if (ignored.length > 0) log.warn({ flags: ignored }, 'these flags have no effect on the daemon: it prints no plan (see the logs and /metrics)');
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
