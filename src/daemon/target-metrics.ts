import { Counter, Gauge, type Registry } from 'prom-client';
import type { DaemonMetrics, RunOutcome } from '../obs/index.js';

/**
 * The per-target series of a daemon of many targets (README, "Fleet: one access file, many services"), labelled `target`. The label's values
 * are the names of the targets file this replica owns — DNS labels the file checked, at most
 * one series per target and family — so a series' count is bounded by the file, and the
 * series of a target that leaves the file (or this shard) are removed. Only gauges and
 * counters: a histogram per target would multiply every target by its buckets.
 *
 * Run and change counters also feed the process's unlabelled ones (amsync_sync_runs_total,
 * amsync_changes_total, amsync_sync_runs_abandoned_total), so the alerts written for one
 * service work for a fleet.
 */
export interface TargetMetrics {
  /** The DaemonMetrics a target's Reconciler records into. */
  forTarget(target: string): DaemonMetrics;
  /** A target left: its series go. */
  removeTarget(target: string): void;
  /** Targets this replica owns now. */
  setOwnedTargets(count: number): void;
}

const outcomes: readonly RunOutcome[] = ['success', 'partial', 'refused', 'failure', 'invalid_input'];

export function createTargetMetrics(registry: Registry, global: DaemonMetrics): TargetMetrics {
  const registers = [registry];
  const runs = new Counter({ name: 'amsync_target_sync_runs_total', help: 'Sync runs of each target, by outcome (as amsync_sync_runs_total).', labelNames: ['target', 'outcome'] as const, registers });
  const lastDuration = new Gauge({ name: 'amsync_target_last_sync_duration_seconds', help: 'Duration of the last sync run of each target.', labelNames: ['target'] as const, registers });
  const changes = new Counter({ name: 'amsync_target_changes_total', help: 'Changes applied to each target, by outcome (applied, failed, skipped).', labelNames: ['target', 'outcome'] as const, registers });
  const drift = new Gauge({ name: 'amsync_target_drifted_items', help: 'Changes planned at the start of the last run of each target that reached its service (both kinds).', labelNames: ['target'] as const, registers });
  const unmanaged = new Gauge({ name: 'amsync_target_unmanaged_items', help: 'Remote items neither declared nor pruned on each target, as of its last run that reached the service.', labelNames: ['target'] as const, registers });
  const lastSuccess = new Gauge({ name: 'amsync_target_last_successful_sync_timestamp_seconds', help: 'Unix time of the end of the last successful run of each target; 0 before the first.', labelNames: ['target'] as const, registers });
  const running = new Gauge({ name: 'amsync_target_sync_in_progress', help: '1 while a run of the target is in progress.', labelNames: ['target'] as const, registers });
  const failures = new Gauge({ name: 'amsync_target_consecutive_failed_runs', help: 'Failed runs of each target since its last successful one.', labelNames: ['target'] as const, registers });
  const ready = new Gauge({ name: 'amsync_target_ready', help: "What /readyz says of each target: 1 ready, 0 not (the fleet's readiness is amsync_ready).", labelNames: ['target'] as const, registers });
  const abandoned = new Counter({ name: 'amsync_target_sync_runs_abandoned_total', help: 'Runs of each target abandoned at the run deadline.', labelNames: ['target'] as const, registers });
  const pending = new Gauge({ name: 'amsync_target_pending_approvals', help: 'Changes the policy gates that wait for an approval on each target, as of its last run.', labelNames: ['target'] as const, registers });
  // amsync_pending_approvals of a fleet: the sum over its targets.
  const pendingByTarget = new Map<string, number>();
  const expiriesByTarget = new Map<string, { next: number | undefined; soon: number }>(), setFleetExpiries = (byTarget = expiriesByTarget) => fleetExpiries(global, byTarget);
  const owned = new Gauge({ name: 'amsync_fleet_targets', help: 'Targets this replica runs: those of the targets file its shard owns.', registers });
  owned.set(0);
  const families = [runs, lastDuration, changes, drift, unmanaged, lastSuccess, running, failures, ready, abandoned, pending];
  const known = new Set<string>();

  return {
    forTarget(target) {
      if (!known.has(target)) {
        known.add(target);
        for (const outcome of outcomes) runs.inc({ target, outcome }, 0);
        abandoned.inc({ target }, 0);
        lastSuccess.set({ target }, 0);
        running.set({ target }, 0);
        failures.set({ target }, 0);
        ready.set({ target }, 0);
        drift.set({ target }, 0);
        unmanaged.set({ target }, 0);
        pending.set({ target }, 0);
      }
      const perKind = { drift: { sshUser: 0, apikey: 0 }, unmanaged: { sshUser: 0, apikey: 0 } };
      return {
        recordRun(outcome, seconds) {
          runs.inc({ target, outcome: (outcomes as readonly string[]).includes(outcome) ? outcome : 'failure' });
          lastDuration.set({ target }, Math.max(0, seconds));
          global.recordRun(outcome, seconds);
        },
        recordChange(kind, action, outcome) {
          changes.inc({ target, outcome });
          global.recordChange(kind, action, outcome);
        },
        setDrift(kind, items) {
          perKind.drift[kind] = items;
          drift.set({ target }, perKind.drift.sshUser + perKind.drift.apikey);
        },
        setUnmanaged(kind, items) {
          perKind.unmanaged[kind] = items;
          unmanaged.set({ target }, perKind.unmanaged.sshUser + perKind.unmanaged.apikey);
        },
        // The files are the fleet's: amsync_config_valid says it once.
        setConfigValid: () => undefined,
        setLastSuccess: (epochMs) => lastSuccess.set({ target }, epochMs / 1000),
        setRunning: (on) => running.set({ target }, on ? 1 : 0),
        setConsecutiveFailures: (count) => failures.set({ target }, count),
        setReady: (on) => ready.set({ target }, on ? 1 : 0),
        setPendingApprovals(count) {
          pending.set({ target }, count);
          pendingByTarget.set(target, count);
          global.setPendingApprovals([...pendingByTarget.values()].reduce((a, b) => a + b, 0));
        },
        recordAbandoned() {
          abandoned.inc({ target });
          global.recordAbandoned();
        },
        setExpiries: (next, soon) => setFleetExpiries(expiriesByTarget.set(target, { next, soon })),
      };
    },
    removeTarget(target) {
      if (!known.delete(target)) return;
      pendingByTarget.delete(target);
      if (expiriesByTarget.delete(target)) setFleetExpiries();
      for (const family of families) family.remove({ target } as never);
      for (const outcome of outcomes) runs.remove({ target, outcome });
      for (const outcome of ['applied', 'failed', 'skipped']) changes.remove({ target, outcome });
    },
    setOwnedTargets: (count) => owned.set(count),
  };
}

/** The fleet's expiry gauges: the earliest next expiry and the sum of items expiring, over its targets. */
function fleetExpiries(global: Pick<DaemonMetrics, 'setExpiries'>, byTarget: ReadonlyMap<string, { next: number | undefined; soon: number }>): void {
  const all = [...byTarget.values()];
  const next = all.reduce<number | undefined>((a, e) => (e.next === undefined ? a : a === undefined ? e.next : Math.min(a, e.next)), undefined);
  global.setExpiries?.(next, all.reduce((a, e) => a + e.soon, 0));
}
