import type { AuditLine } from '../audit/index.js';
import type { Action, GateRule, Kind } from '../model/index.js';

/**
 * What the daemon's status page (`GET /status`) and its JSON (`GET /status.json`) show: the
 * facts the daemon assembles at the request, the same for the HTML and the JSON. Names (keys,
 * targets, reasons) are as the service and the files give them: the renderer escapes them.
 * Never a password or a token: a change is named by kind, action and key.
 */
export interface StatusSnapshot {
  /** When the snapshot was taken (ISO-8601, the daemon's wall clock). */
  readonly generatedAt: string;
  readonly daemon: DaemonFacts;
  /** The one service (name null), or the fleet's owned targets in the targets file's order. */
  readonly targets: readonly TargetStatus[];
  /** The tail of the audit log; null when no audit log is set. */
  readonly audit: AuditTail | null;
}

export interface DaemonFacts {
  /** A targets file (true) or the one service. */
  readonly fleet: boolean;
  /** The desired-state file(s), as the logs name them. */
  readonly file: string;
  readonly mode: 'apply' | 'observe';
  /** Runs may write now (apply mode, not suspended, inside the sync windows). */
  readonly writes: boolean;
  readonly ready: boolean;
  readonly reason: string;
  /** `amsync ctl suspend`: why, since when, by whom. */
  readonly suspended: { readonly reason: string; readonly since: string; readonly by: string | null } | null;
  /** The sync windows (daemon.windows): whether they let runs write now, and why not. */
  readonly window: { readonly open: boolean; readonly reason: string; readonly windows: number };
}

export interface TargetStatus {
  /** The target's name in the targets file; null for the one service. */
  readonly name: string | null;
  readonly url: string | null;
  readonly ready: boolean;
  readonly reason: string;
  readonly running: boolean;
  readonly lastSuccessAt: string | null;
  readonly consecutiveFailures: number;
  /** The last run that ended; null before one. */
  readonly lastRun: LastRun | null;
  /** Changes the policy gates that wait for an approval, as of the last run that applied. */
  readonly pending: PendingApprovals;
  /** The next expiry of the last plan (ISO-8601), and how many expire within 24 h. */
  readonly nextExpiry: string | null;
  readonly expiringSoon: number;
}

export interface LastRun {
  readonly startedAt: string;
  readonly finishedAt: string;
  /** What asked for it: `start`, `file`, `schedule`, `reload`, `ctl`, `expiry`... */
  readonly trigger: readonly string[];
  /** success, partial, refused, failure, invalid_input. */
  readonly outcome: string;
  /** It only planned (observe mode, writes held, an invalid file). */
  readonly dryRun: boolean;
  /** Changes planned at its start (drift), and those written. */
  readonly drift: number;
  readonly applied: number;
  /** The changes it wrote (at most `maxListedChanges`; `applied` counts them all). */
  readonly changes: readonly ChangeLine[];
  /** What failed, each with one line of why (at most `maxListedChanges`). */
  readonly failures: readonly FailureLine[];
  /** The run's one-line error (a refusal, the service unreachable), when it had one. */
  readonly error: string | null;
}

export interface ChangeLine {
  readonly kind: Kind;
  readonly action: Action;
  readonly key: string;
}

/** A change that failed, or an item the run could not decide on (action null: a plan problem, a token file). */
export interface FailureLine {
  readonly kind: Kind;
  readonly action: Action | null;
  readonly key: string;
  readonly reason: string;
}

export interface PendingApprovals {
  /** What to list in the approvals file to approve them all. */
  readonly approve: readonly string[];
  readonly changes: readonly (ChangeLine & { readonly hash: string; readonly rules: readonly GateRule[] })[];
}

export interface AuditTail {
  readonly file: string;
  /** The last lines, oldest first. */
  readonly lines: readonly AuditLine[];
  /** Why it could not be read, when it could not (the page shows the rest). */
  readonly error: string | null;
}

/** Changes and failures listed per run at most: a run of thousands must not make a page of thousands. */
export const maxListedChanges = 50;
/** Audit lines shown. */
export const statusAuditLines = 50;
