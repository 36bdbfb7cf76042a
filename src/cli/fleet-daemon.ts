import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import type { CredentialHandover } from '../api/index.js';
import type { LeaseElector, RunningFleetDaemon, TargetService } from '../daemon/index.js';
import { secretFilesOf } from '../desired/index.js';
import { UsageError } from '../errors.js';
import { ordinalOf, ownedTargets, parseShard, targetSettings, type Shard, type Target } from '../fleet/index.js';
import { createLogger, type AmsyncMetrics, type Logger } from '../obs/index.js';
import { parseLeaseRef, type LeaseRef, type Settings } from '../settings/index.js';
import { quote } from '../yaml/index.js';
import { notifyGraceMs, throwOnAuditFailure } from '../app/index.js';
import { attachClientMetrics, flushLogger, runtimeOptions, startElection, auditTrigger, stopWritesOf } from './daemon-helpers.js';
import { defaultTargetConcurrency, type FleetOptions, fleetDesiredFile } from './fleet-options.js';
import { loadFleet } from './fleet.js';
import type { CliIo, Env } from './io.js';
import { resolveSettings, type ServiceOptions } from './shared-options.js';
import type { ServiceContext } from './service-context.js';
import { version } from './version.js';
import type { createServiceContext as createServiceContextType } from './service-context.js';
import type { Notifier } from '../notify/index.js';
import type { NotifyEvent } from '../model/index.js';

export interface FleetDaemonOptions extends ServiceOptions, FleetOptions {
  /** `--shards N`: this replica's shard is the ordinal its pod name ends in. */
  readonly shards?: number;
  /** `--shard I/N`. */
  readonly shard?: string;
}

const forcedExitCodes = { SIGINT: 130, SIGTERM: 143, stop: 1 } as const;

/**
 * This replica's shard: `--shard I/N`, or `--shards N` with the ordinal of a StatefulSet pod's
 * name (POD_NAME, else HOSTNAME, which Kubernetes sets to it: `amsync-fleet-2` is shard 2).
 */
export function resolveShard(opts: Pick<FleetDaemonOptions, 'shards' | 'shard'>, env: Env): Shard | undefined {
  if (opts.shard !== undefined && opts.shards !== undefined) throw new UsageError('--shard I/N and --shards N both set the shard: give one', 'conflicting_flags');
  if (opts.shard !== undefined) {
    const shard = parseShard(opts.shard);
    if (!shard) throw new UsageError(`Expected \`--shard\` to be I/N with 0 ≤ I < N (the replica's shard of N, e.g. 0/3), got ${quote(opts.shard)}`, 'bad_flag_value');
    return shard;
  }
  if (opts.shards === undefined) return undefined;
  const pod = env.POD_NAME || env.HOSTNAME || hostname();
  const index = ordinalOf(pod);
  if (index === undefined) throw new UsageError(`--shards ${opts.shards} takes this replica's shard from its pod name, which must end in -<ordinal> as a StatefulSet's do; got ${quote(pod)} (POD_NAME, else HOSTNAME); or give --shard I/N`, 'bad_flag_value');
  if (index >= opts.shards) throw new UsageError(`this replica is ${quote(pod)}, ordinal ${index}, but --shards is ${opts.shards}: scale the StatefulSet and --shards together`, 'bad_flag_value');
  return { index, count: opts.shards };
}

/** The shard's Lease: `lease:NS/NAME` gives `NAME-shard-I` in NS (one Lease per shard). */
export function shardLease(ref: LeaseRef, shard: Shard | undefined): LeaseRef {
  return shard === undefined ? ref : { namespace: ref.namespace, name: `${ref.name}-shard-${shard.index}` };
}

/**
 * `amsync daemon --targets FILE`: the fleet daemon. Each owned target keeps one client across
 * runs (its limiter, its login), opened again when its entry in the targets file changes or on
 * SIGHUP. With `--shards`/`--shard`, only the targets rendezvous hashing gives this shard; with
 * `--leader-elect`, the shard's Lease guards them: a second pod of the same shard waits.
 */
export async function runFleetDaemon(opts: FleetDaemonOptions, io: CliIo, targetsFile: string): Promise<number> {
  const env = io.env;
  const shard = resolveShard(opts, env);
  const [{ DaemonError, startFleetDaemon }, { createMetrics }, { createNotifier, createServiceContext, renewalGraceMs }] = await Promise.all([import('../daemon/index.js'), import('../obs/metrics.js'), import('./service-context.js')]);
  let base = await resolveSettings(opts, env);
  const logger = createLogger({ level: base.logLevel, destination: io.stderr, pretty: io.stderr.isTTY === true, colorize: !env.NO_COLOR });
  const log = logger.child({ component: 'daemon' });
  const metrics = createMetrics({ version, processMetrics: true });
  const desiredFile = fleetDesiredFile(opts, env);
  if (shard !== undefined && base.daemon.leaderElect === undefined) {
    log.warn({ shard: `${shard.index}/${shard.count}` }, 'sharded without --leader-elect: nothing stops a second pod of this shard from writing at the same time (apikeys could be duplicated); add --leader-elect lease:NAMESPACE/NAME');
  }

  // One notifier for the fleet: every target's events name it.
  const notifier = createNotifier(base, env, logger, metrics);
  let elector: LeaseElector | undefined;
  let daemon: RunningFleetDaemon | undefined;
  try {
    elector = await startShardElection(base, shard, env, metrics, log, (leading, message) => {
      notifier?.notify({ event: 'leadership_changed', message });
      if (leading) daemon?.trigger('leader');
    });
    daemon = await startFleetDaemon({
      ...(notifier ? { notify: (event: NotifyEvent) => notifier.notify(event) } : {}),
      loadFleet: async () => {
        const fleet = await loadFleet({ ...opts, file: desiredFile }, env, targetsFile);
        const owned = shard === undefined ? fleet.selected : ownedTargets(fleet.selected, shard);
        return {
          targets: owned,
          desired: fleet.desired,
          watchFiles: [resolve(desiredFile), resolve(targetsFile), ...secretFilesOf(fleet.desired)],
          warnings: fleet.warnings,
          fileHash: createHash('sha256').update(`${fleet.desiredFileHash}\0${JSON.stringify(owned.map((t) => [t.name, t.url, t.labels]))}`).digest('hex'),
        };
      },
      openTarget: (target, credentialFrom) => openTarget({ opts, io, logger, metrics, notifier, elector, createServiceContext, renewalGraceMs }, targetSettings(base, target), target, credentialFrom),
      reloadSettings: async () => {
        const next = await resolveSettings(opts, env);
        logger.level = next.logLevel;
        log.level = next.logLevel;
        base = next;
        return runtimeOptions(next);
      },
      ...(elector ? { mayWrite: () => elector!.leading } : {}),
      logger: log,
      metrics,
      options: {
        file: desiredFile,
        targetsFile,
        targetConcurrency: opts.targetConcurrency ?? defaultTargetConcurrency,
        ...base.daemon,
        ...(shard === undefined ? {} : { shard }),
      },
    });
  } catch (error) {
    await elector?.stop();
    if (error instanceof DaemonError && error.code === 'daemon_options') throw new UsageError(error.message, 'bad_flag_value', { cause: error });
    throw error;
  }
  const result = await daemon.stopped;
  await elector?.stop();
  if (notifier) {
    await notifier.flush(notifyGraceMs);
    await notifier.close();
  }
  await flushLogger(logger);
  if (result.forced) return forcedExitCodes[result.reason];
  return result.finished ? 0 : 1;
}

/** The elector of this replica's shard (or of the whole fleet when it is not sharded). */
async function startShardElection(settings: Settings, shard: Shard | undefined, env: Env, metrics: { setLeader(on: boolean): void }, log: Logger, onChange: (leading: boolean, message: string) => void): Promise<LeaseElector | undefined> {
  const configured = settings.daemon.leaderElect === undefined ? undefined : parseLeaseRef(settings.daemon.leaderElect);
  if (!configured) return undefined;
  const wording = { leading: "this replica reconciles its shard's targets", following: 'this replica waits (runs nothing) until it holds the Lease' };
  return startElection(shardLease(configured, shard), env, metrics, log, wording, onChange);
}

interface TargetOpenerParts {
  readonly opts: FleetDaemonOptions;
  readonly io: CliIo;
  readonly logger: Logger;
  readonly metrics: AmsyncMetrics;
  readonly notifier: Notifier | undefined;
  readonly elector: LeaseElector | undefined;
  readonly createServiceContext: typeof createServiceContextType;
  /** How long a reopen waits for a key renewal in flight before handing the key over. */
  readonly renewalGraceMs: number;
}

/** One target's service for the fleet daemon: its context made on the first run, closed when the target goes. */
function openTarget(parts: TargetOpenerParts, settings: Settings, target: Target, credentialFrom?: CredentialHandover): TargetService {
  const { opts, io, logger, metrics, notifier, elector } = parts;
  let context: Promise<ServiceContext> | undefined;
  let opened: ServiceContext | undefined;
  let detach: (() => void) | undefined;
  const open = () =>
    (context ??= parts.createServiceContext(opts, io, { logger: logger.child({ target: target.name }), settings, target: target.name, keepUnpersistedKey: true, ...(notifier ? { notifier } : {}), ...(credentialFrom ? { credentialFrom } : {}) }).then((c) => {
      // An unsendable token is this target's failure, retried with backoff like any other.
      detach = attachClientMetrics(c.client(), metrics, { rate: false });
      opened = c;
      return c;
    }));
  return {
    onWire: () => opened?.onWire() ?? 0,
    credentialStatus: () => opened?.client().credentialStatus(),
    // A reopen (settings reloaded, its entry changed): the key as it stands goes to the next client.
    handOverCredential: async () => (opened === undefined ? undefined : opened.client().handOverCredential(parts.renewalGraceMs)),
    // Losing the shard's Lease cancels the requests in flight too, not only the writes to
    // come: what may still land after the step-down is at most a request already sent.
    sync: async (desired, o) => {
      const context = await open();
      const outcome = await context.sync(desired, {
        dryRun: o.dryRun,
        pruneAll: opts.prune,
        signal: elector ? AbortSignal.any([o.signal, elector.term]) : o.signal,
        trigger: auditTrigger(o.reasons),
        // SIGTERM or the end of the shard's term: nothing more is sent, what was sent finishes.
        stopWrites: stopWritesOf(o.stop, elector?.term),
        ...(elector ? { writeFence: elector.fence } : {}),
      });
      // A result line the audit log lost fails this target's run, though the writes happened.
      throwOnAuditFailure(context.auditTrail());
      return outcome;
    },
    close: () => {
      void context?.then((c) => {
        detach?.();
        c.close();
      }, () => undefined);
    },
  };
}

