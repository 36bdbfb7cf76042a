import type { AmClient, CredentialEvent } from '../api/index.js';
import { hostname } from 'node:os';
import type { AuditTrigger } from '../audit/index.js';
import type { DaemonRuntimeOptions, LeaseElector, TriggerReason } from '../daemon/index.js';
import type { LeaseRef } from '../settings/index.js';
import { systemTimers } from '../time/index.js';
import type { Env } from './io.js';
import type { ClientMetrics, Logger } from '../obs/index.js';
import type { Settings } from '../settings/index.js';

/* Shared by the daemon of one service (daemon.ts) and the fleet daemon (fleet-daemon.ts). */

/** What a settings reload (SIGHUP) may change without a restart. */
export function runtimeOptions(settings: Settings): Partial<DaemonRuntimeOptions> {
  const { schedule, mode, debounceMs, shutdownGraceMs, runDeadlineMs, approvalsFile } = settings.daemon;
  // approvalsFile is always present: unset in the settings now means unset here.
  return { schedule, mode, debounceMs, shutdownGraceMs, runDeadlineMs, approvalsFile };
}

/** The client's events feed the metrics; returns the unsubscribe. */
export function attachClientMetrics(client: AmClient, metrics: ClientMetrics, options: { readonly rate?: boolean } = {}): () => void {
  // A fleet has one limiter per target: one gauge cannot say all their rates.
  const withRate = options.rate !== false;
  const onRequest = (e: { method: string; route: string; status: number | undefined; error: string | undefined; durationMs: number; rate: number }) => {
    metrics.observeApiRequest({ method: e.method, route: e.route, status: e.status, error: e.error, durationMs: e.durationMs });
    if (withRate) metrics.setLimiterRate(client.limiter.rate);
  };
  const onRetry = (e: { method: string; route: string; reason: string }) => metrics.observeRetry({ method: e.method, route: e.route, reason: e.reason });
  const onThrottle = (e: { method: string; route: string; status: number; rate: number }) => {
    metrics.observeThrottle({ method: e.method, route: e.route, status: e.status });
    if (withRate) metrics.setLimiterRate(e.rate);
  };
  const onCredential = (e: CredentialEvent) => metrics.observeCredential(e);
  client.events.on('request', onRequest);
  client.events.on('retry', onRetry);
  client.events.on('throttle', onThrottle);
  client.events.on('credential', onCredential);
  if (withRate) metrics.setLimiterRate(client.limiter.rate);
  return () => {
    client.events.off('request', onRequest);
    client.events.off('retry', onRetry);
    client.events.off('throttle', onThrottle);
    client.events.off('credential', onCredential);
  };
}

/** Lets buffered log lines out before the entry exits; bounded, so a stuck transport cannot hold the exit. */
export function flushLogger(logger: Logger): Promise<void> {
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

/**
 * What cancels a run's requests: its deadline, and for a run that writes under leader election
 * the end of the term too, so no request of a deposed leader outlives its lease. A run that
 * only observes (every run of a replica that does not lead) keeps the deadline alone: the term
 * of a follower is aborted from the start.
 */
export function runSignal(deadline: AbortSignal, term: AbortSignal | undefined, dryRun: boolean): AbortSignal {
  return term === undefined || dryRun ? deadline : AbortSignal.any([deadline, term]);
}

/**
 * What stops a run short of the wire (nothing more sent, what was sent finishes): the daemon
 * beginning to stop (SIGTERM), or the Lease's term ending.
 */
export function stopWritesOf(stop: AbortSignal, term: AbortSignal | undefined): AbortSignal {
  return term === undefined ? stop : AbortSignal.any([stop, term]);
}

/** What a replica says in its log when it gains or loses the Lease. */
export interface ElectionWording {
  readonly leading: string;
  readonly following: string;
}

/**
 * The elector of a Lease, running beside the daemon for its whole life. The identity is the
 * pod's name (POD_NAME from the downward API, else HOSTNAME, which Kubernetes sets to the pod
 * name), so a restarted pod of a StatefulSet keeps its claim. `onChange` hears every change of
 * leadership with a one-line message (the webhooks' leadership_changed).
 */
export async function startElection(
  ref: LeaseRef,
  env: Env,
  metrics: { setLeader(on: boolean): void },
  log: Logger,
  wording: ElectionWording,
  onChange: (leading: boolean, message: string) => void,
): Promise<LeaseElector> {
  const identity = env.POD_NAME || env.HOSTNAME || hostname();
  const [{ kubeLeaseStore }, { LeaseElector }] = await Promise.all([import('../daemon/kube-lease-store.js'), import('../daemon/lease-elector.js')]);
  const store = await kubeLeaseStore({ ref });
  const elector = new LeaseElector({
    store,
    identity,
    timers: systemTimers,
    onChange: (leading, detail) => {
      metrics.setLeader(leading);
      if (leading) log.info({ lease: store.describe, identity }, `leading: ${detail}; ${wording.leading}`);
      else log.warn({ lease: store.describe, identity }, `not leading: ${detail}; ${wording.following}`);
      onChange(leading, `${identity} ${leading ? 'now leads' : 'no longer leads'} (${store.describe}): ${detail}`);
    },
    onError: (error) => log.warn({ lease: store.describe, err: error instanceof Error ? error.message : String(error) }, 'leader election: the Lease could not be read or written; retrying'),
  });
  metrics.setLeader(false);
  await elector.start();
  return elector;
}

/** What started a daemon run, as the audit log names it: a file change wins over the schedule. */
export function auditTrigger(reasons: readonly TriggerReason[]): AuditTrigger {
  if (reasons.includes('file') || reasons.includes('reload')) return 'file-change';
  if (reasons.includes('start') || reasons.includes('leader')) return 'startup';
  return 'schedule';
}
