import type { Report } from '../report/index.js';
import type { ApplySavedOutcome, SyncOutcome } from '../sync/index.js';

/** The report of a plan or a sync of one service: a refused sync reports as a dry run (nothing was written). */
export function syncReport(outcome: SyncOutcome, run: { dryRun: boolean; file: string; planFile: string | undefined; sources: boolean }): Report {
  return {
    plan: outcome.plan,
    dryRun: run.dryRun || outcome.refusal !== undefined,
    results: outcome.results,
    file: run.file,
    planFile: run.planFile,
    ...(outcome.roleNames === undefined ? {} : { roleNames: outcome.roleNames }),
    ...(run.sources ? { sources: true } : {}),
    ...(outcome.approval ? { approval: outcome.approval } : {}),
  };
}

/** The report of `amsync apply PLANFILE`. */
export function savedPlanReport(outcome: ApplySavedOutcome, run: { file: string; planFile: string; sources: boolean }): Report {
  return {
    plan: outcome.plan,
    dryRun: false,
    results: outcome.results,
    file: run.file,
    command: 'apply',
    planFile: run.planFile,
    ...(outcome.roleNames === undefined ? {} : { roleNames: outcome.roleNames }),
    ...(run.sources ? { sources: true } : {}),
    approval: outcome.approval,
  };
}
