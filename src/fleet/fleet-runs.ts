import { endedByStop, stoppedBeforeSending } from '../api/index.js';
import { LockWaitStoppedError, SafetyError } from '../errors.js';
import type { DesiredState } from '../model/index.js';
import type { SavedPlan } from '../saved-plan/index.js';
import type { ApplySavedOutcome, SyncOutcome } from '../sync/index.js';
import { classifyRun, outcomeOfError, type TargetOutcome } from './fleet-outcome.js';
import type { SavedFleetPlan } from './fleet-plan.js';
import { normaliseServiceUrl } from './parse-targets.js';
import { runPool } from './pool.js';
import { desiredForTarget } from './select-targets.js';
import type { Target } from './target.js';

export interface FleetSyncInput {
  /** The targets of this run, in the file's order. */
  readonly targets: readonly Target[];
  /** The whole desired file; each target gets the items it selects. */
  readonly desired: DesiredState;
  /** `--target-concurrency`. */
  readonly concurrency: number;
  /**
   * One target's sync (plan, guards, apply unless a dry-run) with its own client, state file,
   * token folder and writer lock. Whatever it throws is that target's failure alone.
   */
  syncTarget(target: Target, desired: DesiredState): Promise<SyncOutcome>;
  /** Once this fires no target starts (an interrupt); those already running stop writing themselves. */
  readonly signal?: AbortSignal;
  /** The state file of a target, for the message when it cannot be written. */
  stateFileOf?(target: Target): string;
  /** Each target's outcome, in the targets' order, as soon as it and those before it are known. */
  onTargetDone?(outcome: TargetOutcome, index: number): void;
}

export interface FleetSyncResult {
  readonly outcomes: readonly TargetOutcome[];
  /** Each target's sync, when it got as far as a plan (saved fleet plans are made from them). */
  readonly syncs: readonly (SyncOutcome | undefined)[];
}

/**
 * plan / sync over a fleet: every target concurrently (up to `concurrency`), each isolated —
 * an unreachable service, a 401, an incomplete listing or a guard's refusal is that target's
 * outcome and changes nothing for any other.
 */
export async function runFleetSync(input: FleetSyncInput): Promise<FleetSyncResult> {
  const syncs: (SyncOutcome | undefined)[] = new Array<SyncOutcome | undefined>(input.targets.length).fill(undefined);
  const outcomes = await runPool(
    input.targets,
    input.concurrency,
    async (target, index): Promise<TargetOutcome> => {
      if (input.signal?.aborted) return skipped(target, 'interrupted', 'not started: the run was interrupted');
      try {
        const sync = await input.syncTarget(target, desiredForTarget(input.desired, target));
        syncs[index] = sync;
        return classifyRun(target, sync, input.stateFileOf?.(target), { interrupted: input.signal?.aborted === true });
      } catch (error) {
        // Cut short by the interrupt before it wrote (a listing cut short, or one whose retry of
        // a 503 the stop kept from starting; a wait for its writer lock): it had started, so it
        // is not counted with the targets never contacted, and it wrote nothing.
        if (input.signal?.aborted && endedByInterrupt(error)) return interruptedBeforeWriting(target, error);
        return outcomeOfError(target, error);
      }
    },
    input.onTargetDone,
  );
  return { outcomes, syncs };
}

function endedByInterrupt(error: unknown): boolean {
  return stoppedBeforeSending(error) || endedByStop(error) || error instanceof LockWaitStoppedError;
}

/** A target the interrupt stopped before any of its changes was sent: the single service's words. */
function interruptedBeforeWriting(target: Pick<Target, 'name' | 'url'>, error: unknown): TargetOutcome {
  const message = error instanceof LockWaitStoppedError ? `interrupted while waiting for the writer lock ${error.path} (${error.holder}); nothing was sent` : 'interrupted before any change was sent: nothing was written';
  return { name: target.name, url: target.url, status: 'interrupted', error: { code: 'interrupted', message } };
}

function skipped(target: Pick<Target, 'name' | 'url'>, code: string, message: string): TargetOutcome {
  return { name: target.name, url: target.url, status: 'skipped', error: { code, message } };
}

export interface FleetApplyInput {
  readonly saved: SavedFleetPlan;
  /** The plan file as given, for messages. */
  readonly planFile: string;
  /** The targets file's targets: URLs and credentials come from it, never from the plan alone. */
  readonly targets: readonly Target[];
  readonly concurrency: number;
  /** `--partial`: apply the targets that are still fresh when others went stale. */
  readonly partial: boolean;
  /**
   * One target's apply of its saved plan (sync's applySavedPlan with its own client, state
   * file, token folder and lock), which calls `beforeApply` once that target's checks passed.
   */
  applyTarget(target: Target, saved: SavedPlan, beforeApply: () => Promise<boolean>): Promise<ApplySavedOutcome>;
  readonly signal?: AbortSignal;
  stateFileOf?(target: Target): string;
  onTargetDone?(outcome: TargetOutcome, index: number): void;
}

/**
 * `amsync apply FLEETPLAN`: every target with changes is checked first (its lock taken, its
 * service listed and compared with the plan's fingerprint, its changes and guards verified),
 * and only when all passed does any target write. One that went stale, was refused or could
 * not be checked refuses the whole plan: nothing is written anywhere (its own outcome is
 * `refused` or `failed`, the others `skipped`). With `partial`, the fresh ones apply and the
 * others are reported. A target whose saved plan has no changes is not contacted.
 */
export async function applyFleetPlan(input: FleetApplyInput): Promise<readonly TargetOutcome[]> {
  const byName = new Map(input.targets.map((t) => [t.name, t]));
  // A target the targets file no longer has, or has at another URL: the token must not go where the plan says.
  const found = input.saved.targets.map((p) => {
    const target = byName.get(p.name);
    if (target === undefined) return { p, refusal: `${input.planFile}: target ${p.name} is not in the targets file any more; nothing was sent to it` };
    if (normaliseServiceUrl(target.url) !== normaliseServiceUrl(p.url)) {
      return { p, refusal: `the plan of target ${p.name} was made for ${p.url}, but the targets file now gives ${target.url}; nothing was sent to it` };
    }
    return { p, target };
  });
  const contacted = found.filter((f) => f.target !== undefined && f.p.plan.plan.changes.length > 0).length;
  const barrier = new CheckBarrier(contacted, input.partial, found.filter((f) => f.target === undefined).length);
  return runPool(
    found,
    input.concurrency,
    async ({ p, target, refusal }, _index, slots): Promise<TargetOutcome> => {
      if (target === undefined) return outcomeOfError(p, new SafetyError('plan_mismatch', refusal ?? 'mismatch'), p.plan.plan);
      if (p.plan.plan.changes.length === 0) return { name: p.name, url: p.url, status: 'unchanged', plan: p.plan.plan };
      if (input.signal?.aborted) {
        barrier.fail();
        return skipped(p, 'interrupted', 'not started: the apply was interrupted');
      }
      let arrived = false;
      const beforeApply = async (): Promise<boolean> => {
        arrived = true;
        // Waiting for the others must not hold a slot another target needs to be checked.
        slots.release();
        try {
          return await barrier.arrive();
        } finally {
          await slots.acquire();
        }
      };
      try {
        const outcome = await input.applyTarget(target, p.plan, beforeApply);
        if (outcome.cancelled) {
          return {
            name: p.name,
            url: p.url,
            status: 'skipped',
            plan: p.plan.plan,
            error: { code: 'fleet_plan_refused', message: `not applied: ${barrier.failedWords()} of the plan could not be applied as planned, so nothing was written anywhere; plan again (or apply with --partial to apply the fresh ones)` },
          };
        }
        return classifyRun(p, outcome, input.stateFileOf?.(target), { interrupted: input.signal?.aborted === true });
      } catch (error) {
        if (!arrived) barrier.fail();
        if (input.signal?.aborted && endedByInterrupt(error)) return { ...interruptedBeforeWriting(p, error), plan: p.plan.plan };
        return outcomeOfError(p, error, p.plan.plan);
      }
    },
    input.onTargetDone,
  );
}

/**
 * Every contacted target either arrives (its checks passed) or fails; once all have, those
 * that arrived learn whether to write: yes when none failed, or with `partial`.
 */
class CheckBarrier {
  readonly #total: number;
  readonly #partial: boolean;
  /** Refused before any contact (not in the targets file, another URL). */
  readonly #refusedBefore: number;
  #arrived = 0;
  #failed = 0;
  readonly #waiting: ((go: boolean) => void)[] = [];

  constructor(contacted: number, partial: boolean, refusedBefore: number) {
    this.#total = contacted;
    this.#partial = partial;
    this.#refusedBefore = refusedBefore;
  }

  arrive(): Promise<boolean> {
    this.#arrived += 1;
    const decided = new Promise<boolean>((resolve) => this.#waiting.push(resolve));
    this.#settle();
    return decided;
  }

  fail(): void {
    this.#failed += 1;
    this.#settle();
  }

  failedWords(): string {
    const n = this.#failed + this.#refusedBefore;
    return `${n} other target${n === 1 ? '' : 's'}`;
  }

  #settle(): void {
    if (this.#arrived + this.#failed < this.#total) return;
    const go = this.#failed + this.#refusedBefore === 0 || this.#partial;
    for (const resolve of this.#waiting.splice(0)) resolve(go);
  }
}
