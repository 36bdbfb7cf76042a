import type { SyncOptions } from '../app/index.js';
import type { TriggerReason } from './sync-loop.js';

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

/** What started a daemon run, as the audit log names it: a file change wins over the schedule. */
export function auditTrigger(reasons: readonly TriggerReason[]): NonNullable<SyncOptions['trigger']> {
  if (reasons.includes('file') || reasons.includes('reload')) return 'file-change';
  if (reasons.includes('start') || reasons.includes('leader')) return 'startup';
  return 'schedule';
}
