import type { CredentialHandover } from '../api/index.js';
import { AuditTrail, createNotifier, createServiceContext, loadFleet, notifyGraceMs, renewalGraceMs, throwOnAuditFailure, type AuditControlEntry, type ServiceContext } from '../app/index.js';
import { ownedInput, shardLease, targetSettings, type Shard, type Target } from '../fleet/index.js';
import type { NotifyEvent } from '../model/index.js';
import { createLogger, type AmsyncMetrics, type Logger } from '../obs/index.js';
import { parseLeaseRef, type Settings } from '../settings/index.js';
import { attachClientMetrics } from './client-metrics.js';
import type { StopResult } from './daemon-lifecycle.js';
import { runtimeOptions } from './daemon-options.js';
import type { DaemonRequest, FleetRequest } from './daemon-request.js';
import { ctlSocketPath } from './ctl-socket-path.js';
import { flushLogger } from './flush-logger.js';
import { startElection } from './leader-election.js';
import type { LeaseElector } from './lease-elector.js';
import { auditTrigger, stopWritesOf, type TargetService } from './target-runner.js';
import { startFleetDaemon, type RunningFleetDaemon } from './targets-file.js';

/**
 * `amsync daemon --targets FILE` until it stops (serve.ts). Each owned target keeps one client
 * across runs (its limiter, its login), opened again when its entry in the targets file
 * changes or on SIGHUP. With a shard, only the targets rendezvous hashing gives it; with
 * `--leader-elect`, the shard's Lease guards them: a second pod of the same shard waits.
 */
export async function serveTargetsFile(request: DaemonRequest, fleet: FleetRequest, metrics: AmsyncMetrics): Promise<StopResult> {
  const { env } = request;
  const { shard } = fleet;
  let base = request.settings;
  const logger = createLogger({ level: base.logLevel, destination: request.stderr, pretty: request.stderr.isTTY === true, colorize: !env.NO_COLOR });
  const log = logger.child({ component: 'daemon' });
  if (shard !== undefined && base.daemon.leaderElect === undefined) {
    log.warn({ shard: `${shard.index}/${shard.count}` }, 'sharded without --leader-elect: nothing stops a second pod of this shard from writing at the same time (apikeys could be duplicated); add --leader-elect lease:NAMESPACE/NAME');
  }
  // One notifier for the fleet: every target's events name it.
  const notifier = createNotifier(base, env, logger, metrics);
  // The fleet's control lines (suspend, resume, windows) go to the audit log the settings name, target null.
  const audit = base.auditLog === undefined ? undefined : new AuditTrail(base.auditLog, env, logger, null);
  let elector: LeaseElector | undefined;
  let daemon: RunningFleetDaemon | undefined;
  try {
    elector = await startShardElection(base, request, shard, metrics, log, (leading, message) => {
      notifier?.notify({ event: 'leadership_changed', message });
      if (leading) daemon?.trigger('leader');
    });
    const opener: TargetOpener = { request, logger, metrics, notifier, elector };
    daemon = await startFleetDaemon({
      ...(notifier ? { notify: (event: NotifyEvent) => notifier.notify(event) } : {}),
      ...(audit ? { audit: (entry: AuditControlEntry) => audit.recordControl(entry) } : {}),
      loadFleet: async () => ownedInput(await loadFleet(fleet, env, fleet.targetsFile), fleet, shard),
      openTarget: (target, credentialFrom) => openTarget(opener, targetSettings(base, target), target, credentialFrom),
      reloadSettings: async () => {
        const next = await request.readSettings();
        logger.level = next.logLevel;
        log.level = next.logLevel;
        base = next;
        return runtimeOptions(next);
      },
      ...(elector ? { mayWrite: () => elector!.leading } : {}),
      logger: log,
      metrics,
      // As for one service: the signals and the schedule of the caller (in-process tests drive them).
      ...(request.signals ? { signals: request.signals } : {}),
      ...(request.scheduler ? { scheduler: request.scheduler } : {}),
      options: { file: fleet.desiredFile, targetsFile: fleet.targetsFile, targetConcurrency: fleet.targetConcurrency, ...base.daemon, socket: ctlSocketPath(base), ...(base.auditLog === undefined ? {} : { auditLog: base.auditLog }), ...(shard === undefined ? {} : { shard }) },
    });
  } catch (error) {
    await elector?.stop();
    audit?.close();
    throw error;
  }
  const result = await daemon.stopped;
  await elector?.stop();
  audit?.close();
  if (notifier) {
    await notifier.flush(notifyGraceMs);
    await notifier.close();
  }
  await flushLogger(logger);
  return result;
}

/** The elector of this replica's shard (or of the whole fleet when it is not sharded). */
async function startShardElection(settings: Settings, request: DaemonRequest, shard: Shard | undefined, metrics: AmsyncMetrics, log: Logger, onChange: (leading: boolean, message: string) => void): Promise<LeaseElector | undefined> {
  const configured = settings.daemon.leaderElect === undefined ? undefined : parseLeaseRef(settings.daemon.leaderElect);
  if (!configured) return undefined;
  const wording = { leading: "this replica reconciles its shard's targets", following: 'this replica waits (runs nothing) until it holds the Lease' };
  return startElection(shardLease(configured, shard), request.env, metrics, log, wording, onChange);
}

interface TargetOpener {
  readonly request: DaemonRequest;
  readonly logger: Logger;
  readonly metrics: AmsyncMetrics;
  readonly notifier: ReturnType<typeof createNotifier>;
  readonly elector: LeaseElector | undefined;
}

/** One target's service for the daemon: its context made on the first run, closed when the target goes. */
function openTarget(parts: TargetOpener, settings: Settings, target: Target, credentialFrom?: CredentialHandover): TargetService {
  const { request, logger, metrics, notifier, elector } = parts;
  let context: Promise<ServiceContext> | undefined;
  let opened: ServiceContext | undefined;
  let detach: (() => void) | undefined;
  const open = () =>
    // Made once: a context that cannot be made fails every run of the target, as its first did.
    (context ??= (async () =>
      createServiceContext(
        { settings, source: request.source, env: request.env, stderr: request.stderr },
        { logger: logger.child({ target: target.name }), target: target.name, keepUnpersistedKey: true, ...(target.mode === 'observe' ? { observeTarget: true } : {}), ...(notifier ? { notifier } : {}), ...(credentialFrom ? { credentialFrom } : {}) },
      ))().then((c) => {
      // An unsendable token is this target's failure, retried with backoff like any other.
      detach = attachClientMetrics(c.client(), metrics, { rate: false });
      opened = c;
      return c;
    }));
  return {
    onWire: () => opened?.onWire() ?? 0,
    credentialStatus: () => opened?.client().credentialStatus(),
    // A reopen (settings reloaded, its entry changed): the key as it stands goes to the next client.
    handOverCredential: async () => (opened === undefined ? undefined : opened.client().handOverCredential(renewalGraceMs)),
    // Losing the shard's Lease cancels the requests in flight too, not only the writes to
    // come: what may still land after the step-down is at most a request already sent.
    sync: async (desired, o) => {
      const context = await open();
      const outcome = await context.sync(desired, {
        dryRun: o.dryRun,
        pruneAll: request.prune,
        signal: elector ? AbortSignal.any([o.signal, elector.term]) : o.signal,
        trigger: auditTrigger(o.reasons),
        ...(o.now === undefined ? {} : { now: o.now }),
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
