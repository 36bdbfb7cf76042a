import type { RunOutcome } from '../obs/index.js';

/** What the daemon knows about itself; /readyz and the metrics read it. */
export interface DaemonStatus {
  /** Wall-clock epoch ms of the end of the last successful run; undefined before one. */
  readonly lastSuccessAt: number | undefined;
  readonly lastOutcome: RunOutcome | undefined;
  /** One line, redacted, of why the last run failed. */
  readonly lastError: string | undefined;
  /** Failed runs (partial, refused, failure) since the last success. */
  readonly consecutiveFailures: number;
  /** The desired-state file and the settings loaded without error last time. */
  readonly configValid: boolean;
  readonly running: boolean;
  /** A run abandoned at its deadline has not wound down yet: the process may be wedged. */
  readonly stuck: boolean;
  /** The last run was abandoned at its deadline (until a run completes). */
  readonly lastRunAbandoned: boolean;
  /** The run deadline, for the reasons given. */
  readonly runDeadlineMs: number;
  readonly stopping: boolean;
  readonly mode: 'apply' | 'observe';
  /**
   * The service rotated the integrator key and writing it back to its file failed (errno-like
   * code), or it came from AMSYNC_REFRESH_TOKEN (`no_key_file`): not ready.
   */
  readonly keyWriteBackError?: string;
  /**
   * Approval hashes of the changes the last run did not write for want of an approval. The
   * daemon stays ready: the rest of the state is applied, and waiting for a person is not a
   * fault of the pod.
   */
  readonly pendingApprovals?: readonly string[];
  /**
   * Why runs observe only now: `suspended: REASON since T` (amsync ctl suspend) or a sync
   * window. The daemon stays ready: holding writes on purpose is not a fault of the pod.
   */
  readonly writesHeld?: string;
}

/** Hashes listed on /readyz at most; the log and the hook have them all. */
const maxListedApprovals = 10;

export interface ReadinessOptions {
  /**
   * Failed runs in a row after which the daemon reports not ready: one failure is a blip the
   * retry usually fixes; several mean the service stays out of reach. @default 3
   */
  readonly failureThreshold: number;
}

export const defaultReadiness: ReadinessOptions = { failureThreshold: 3 };

export interface Readiness {
  readonly ready: boolean;
  /** For people reading /readyz. */
  readonly reason: string;
}

/**
 * Ready once a run has succeeded and failures have not persisted. An invalid file does not
 * make the daemon unready by itself: the service stays in the last good state, and a typo in
 * a ConfigMap must not pull every pod out of its Service (amsync_config_valid alerts on it).
 * Pure.
 */
export function readiness(status: DaemonStatus, options: ReadinessOptions): Readiness {
  if (status.stopping) return { ready: false, reason: 'shutting down' };
  if (status.stuck) return { ready: false, reason: stuckReason(status) };
  if (status.lastRunAbandoned) {
    return { ready: false, reason: `the last run passed its deadline (${seconds(status.runDeadlineMs)}) and was abandoned; the next run goes ahead` };
  }
  // Not a blip the next run fixes: only a new key does, so no waiting for more failures.
  if (status.lastError === 'integrator_key_rejected') {
    return { ready: false, reason: "integrator_key_rejected: the service refused the integrator key; put a new one from the service's UI in the key file" };
  }
  // It still works, from memory: but a restart, a rescheduled pod, would be locked out. Green
  // would hide that until then; not ready (and amsync_integrator_key_persisted 0) says it now.
  if (status.keyWriteBackError !== undefined) return { ready: false, reason: unpersistedReason(status.keyWriteBackError) };
  if (status.consecutiveFailures >= options.failureThreshold) {
    return { ready: false, reason: `the last ${status.consecutiveFailures} runs failed${status.lastError ? `: ${status.lastError}` : ''}` };
  }
  if (status.lastSuccessAt === undefined) {
    if (!status.configValid) return { ready: false, reason: 'the desired-state file is invalid and no good version has been synced yet' };
    return { ready: false, reason: status.lastError ? `no successful sync yet: ${status.lastError}` : 'no successful sync yet' };
  }
  const notes = [status.configValid ? '' : 'the desired-state file is invalid: the last good version is kept', pendingWords(status.pendingApprovals ?? []), status.writesHeld ?? ''].filter(Boolean);
  return { ready: true, reason: notes.length === 0 ? 'ok' : `ok (${notes.join('; ')})` };
}

/** Why a rotated key is not kept, and the fix: an errno-like code, or `no_key_file` for AMSYNC_REFRESH_TOKEN. */
function unpersistedReason(error: string): string {
  if (error === 'no_key_file') {
    return 'integrator_key_not_persisted: the service rotated the integrator key from AMSYNC_REFRESH_TOKEN, which cannot be written back: a restart would use the retired key; give the key in a file (AMSYNC_REFRESH_TOKEN_FILE)';
  }
  if (error.startsWith('kube_')) {
    return `integrator_key_not_persisted: the service rotated the integrator key and it could not be written back to its Secret (${error}): a restart would use the retired key; grant amsync get and update on that Secret (it is written again at the next renewal)`;
  }
  return `integrator_key_not_persisted: the service rotated the integrator key and it could not be written back to its file (${error}): a restart would use the retired key; make the key file writable (it is written again at the next renewal)`;
}

/** `2 changes await approval: 3f9c0a1be27d4410, 0be1c2d3e4f50617`: hashes only, never names. */
function pendingWords(hashes: readonly string[]): string {
  if (hashes.length === 0) return '';
  const shown = hashes.slice(0, maxListedApprovals).join(', ');
  const more = hashes.length > maxListedApprovals ? `, and ${hashes.length - maxListedApprovals} more` : '';
  return `${hashes.length} change${hashes.length === 1 ? ' awaits' : 's await'} approval: ${shown}${more}`;
}

/**
 * What /healthz answers: alive unless a run abandoned at its deadline has still not wound
 * down. Its requests were cancelled, so what still holds it is something no signal reaches
 * (a blocked read): the process is wedged and a restart is the cure. A slow or failing service
 * never makes amsync not alive. Pure.
 */
export function liveness(status: DaemonStatus | Omit<DaemonStatus, 'stopping' | 'mode'>): Readiness {
  return status.stuck ? { ready: false, reason: stuckReason(status) } : { ready: true, reason: 'ok' };
}

function stuckReason(status: Pick<DaemonStatus, 'runDeadlineMs'>): string {
  return `a sync run passed its deadline (${seconds(status.runDeadlineMs)}), was abandoned, and has not stopped`;
}

function seconds(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`;
}
