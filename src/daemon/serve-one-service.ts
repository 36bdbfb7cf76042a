import type { AmClient, CredentialHandover } from '../api/index.js';
import { createServiceContext, notifyGraceMs, renewalGraceMs, throwOnAuditFailure, type ServiceContext } from '../app/index.js';
import type { DesiredState } from '../model/index.js';
import type { AmsyncMetrics, Logger } from '../obs/index.js';
import { parseLeaseRef, type Settings } from '../settings/index.js';
import type { SyncOutcome } from '../sync/index.js';
import { attachClientMetrics } from './client-metrics.js';
import type { StopResult } from './daemon-lifecycle.js';
import { runtimeOptions, type DaemonRuntimeOptions } from './daemon-options.js';
import type { DaemonRequest } from './daemon-request.js';
import { flushLogger } from './flush-logger.js';
import { startElection } from './leader-election.js';
import type { LeaseElector } from './lease-elector.js';
import { startDaemon, type DaemonDeps, type RunningDaemon } from './one-service.js';
import type { PendingApprovalsEvent } from './pending-approvals.js';
import { auditTrigger, runSignal, stopWritesOf } from './target-runner.js';
import { ctlSocketPath } from './ctl-socket-path.js';

/** The audit log the status page shows the tail of (the settings at start: a new one takes a restart, as `listen`). */
const auditLogOf = (settings: Settings): { auditLog?: string } => (settings.auditLog === undefined ? {} : { auditLog: settings.auditLog });

type MakeContext = (logger?: Logger, credentialFrom?: CredentialHandover) => Promise<ServiceContext>;

/** The daemon of the one service the settings name, until it stops (serve.ts). */
export async function serveOneService(request: DaemonRequest, metrics: AmsyncMetrics): Promise<StopResult> {
  // A rotated key that cannot be written back is kept while the daemon lives, which turns not ready.
  const contextOf = (settings: Settings, logger?: Logger, credentialFrom?: CredentialHandover): ServiceContext =>
    createServiceContext(
      { settings, source: request.source, env: request.env, stderr: request.stderr },
      { notificationMetrics: metrics, keepUnpersistedKey: true, daemonLog: true, ...(logger ? { logger } : {}), ...(credentialFrom ? { credentialFrom } : {}) },
    );
  const makeContext: MakeContext = async (logger, credentialFrom) => contextOf(await request.readSettings(), logger, credentialFrom);
  return new ServiceOfTheMoment(request, metrics, contextOf(request.settings), makeContext).serve();
}

/**
 * The daemon's one service through the context of the moment (replaced on SIGHUP, its client's
 * metrics with it), the Lease that says whether it may write, and the daemon that runs them.
 */
class ServiceOfTheMoment {
  readonly #log: Logger;
  #detach: () => void = () => undefined;
  #elector: LeaseElector | undefined;
  #daemon: RunningDaemon | undefined;

  constructor(
    private readonly request: DaemonRequest,
    private readonly metrics: AmsyncMetrics,
    private service: ServiceContext,
    private readonly makeContext: MakeContext,
  ) {
    this.#log = service.logger.child({ component: 'daemon' });
  }

  /** Starts, waits for the stop, closes what it opened. Throws what stopped it from starting. */
  async serve(): Promise<StopResult> {
    try {
      // A missing URL or token is a usage error (64), found before anything starts.
      this.#detach = attachClientMetrics(this.service.client(), this.metrics);
      // So is a state folder, tokensDir or audit log it could not write (exit 1): not one unexpected failure per run.
      await this.service.checkLocalOutputs({ writes: this.service.settings.daemon.mode === 'apply' });
      this.#elector = await this.#startElection();
      this.#daemon = await startDaemon(this.#deps());
    } catch (error) {
      await this.#elector?.stop();
      this.service.close();
      throw error;
    }
    const result = await this.#daemon.stopped;
    await this.#elector?.stop();
    await this.service.closeNotifier(notifyGraceMs);
    this.service.close();
    await flushLogger(this.service.logger);
    return result;
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
      // The audit log of the moment's settings; none when auditLog is unset.
      audit: (entry) => this.service.auditTrail()?.recordControl(entry),
      // Between runs (the daemon calls it in a run of its own): no sync uses the old context.
      reloadSettings: () => this.#reloadSettings(),
      // The client of the moment: a settings reload replaces it.
      credentialStatus: () => this.service.client().credentialStatus(),
      onWire: () => this.service.onWire(),
      logger: this.#log,
      metrics: this.metrics,
      options: { file: this.service.file, watch: this.service.source.paths, ...this.service.settings.daemon, socket: ctlSocketPath(this.service.settings), ...auditLogOf(this.service.settings) },
      ...(this.request.signals ? { signals: this.request.signals } : {}),
      ...(this.request.scheduler ? { scheduler: this.request.scheduler } : {}),
    };
  }

  /** `--leader-elect lease:NS/NAME`: only the holder writes; the other replicas observe. */
  async #startElection(): Promise<LeaseElector | undefined> {
    const configured = this.service.settings.daemon.leaderElect;
    const ref = configured === undefined ? undefined : parseLeaseRef(configured);
    if (!ref) return undefined;
    const wording = { leading: 'this replica writes', following: 'this replica only observes' };
    return startElection(ref, this.request.env, this.metrics, this.#log, wording, (leading, message) => this.#onLeadership(leading, message));
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
      pruneAll: this.request.prune,
      signal: runSignal(options.signal, term, options.dryRun),
      approvals: options.approvals,
      ...(options.now === undefined ? {} : { now: options.now }),
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
    const credentialFrom = await this.service.client().handOverCredential(renewalGraceMs);
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
