import { readAuditTail } from '../audit/index.js';
import { statusAuditLines, type AuditTail, type DaemonFacts, type StatusSnapshot, type TargetStatus } from '../report/index.js';
import type { CtlStatus } from './ctl-protocol.js';
import type { Readiness } from './readiness.js';
import type { TargetRunner } from './target-runner.js';

/** A target's readiness and URL as its daemon knows them (the fleet's /readyz entry). */
export interface TargetReadinessFacts extends Readiness {
  readonly url: string | null;
}

/** What the daemon hands over to make the status page's snapshot. */
export interface StatusSources {
  readonly now: number;
  readonly fleet: boolean;
  readonly file: string;
  readonly ctl: CtlStatus;
  /** The runners by target name ('' for the one service), in order. */
  readonly runners: ReadonlyMap<string, TargetRunner>;
  /** Each target's readiness by name; the one service's is the daemon's. */
  readonly readiness: ReadonlyMap<string, TargetReadinessFacts>;
  /** The audit log (`auditLog`), when set. */
  readonly auditLog: string | undefined;
}

/**
 * The status page's facts, read from the daemon's runners at the request: nothing is kept for
 * the page between requests. The audit log's tail is read here (bounded, never the whole file).
 */
export async function statusSnapshot(sources: StatusSources): Promise<StatusSnapshot> {
  const { ctl } = sources;
  const daemon: DaemonFacts = {
    fleet: sources.fleet,
    file: sources.file,
    mode: ctl.mode,
    writes: ctl.writes,
    ready: ctl.ready.ready,
    reason: ctl.ready.reason,
    suspended: ctl.suspended,
    window: ctl.window,
  };
  const targets = [...sources.runners.entries()].map(([name, runner]) => targetStatus(name, runner, sources.readiness.get(name), sources.fleet));
  return { generatedAt: new Date(sources.now).toISOString(), daemon, targets, audit: sources.auditLog === undefined ? null : await auditTail(sources.auditLog) };
}

function targetStatus(name: string, runner: TargetRunner, readiness: TargetReadinessFacts | undefined, fleet: boolean): TargetStatus {
  const reconciler = runner.reconciler;
  const s = reconciler.status();
  const expiry = reconciler.expiryFacts;
  return {
    name: fleet ? name : null,
    url: readiness?.url ?? null,
    ready: readiness?.ready ?? false,
    reason: readiness?.reason ?? 'unknown',
    running: s.running,
    lastSuccessAt: s.lastSuccessAt === undefined ? null : new Date(s.lastSuccessAt).toISOString(),
    consecutiveFailures: s.consecutiveFailures,
    lastRun: reconciler.lastRun ?? null,
    pending: {
      approve: [...reconciler.approve],
      changes: reconciler.pendingApprovals.map((p) => ({ hash: p.hash, kind: p.kind, action: p.action, key: p.key, rules: p.rules })),
    },
    nextExpiry: expiry.next === undefined ? null : new Date(expiry.next).toISOString(),
    expiringSoon: expiry.soon,
  };
}

/** The last lines of the audit log; an unreadable log is said on the page, not a failed page. */
async function auditTail(file: string): Promise<AuditTail> {
  try {
    return { file, lines: await readAuditTail(file, statusAuditLines), error: null };
  } catch (error) {
    return { file, lines: [], error: (error as Error).message };
  }
}
