import { dirname, relative, resolve } from 'node:path';
import { passwordReferences, toSavedPlan, writeSavedPlan, type SavedApprovals } from '../saved-plan/index.js';
import { isFsError, localPathError } from '../secrets/index.js';
import type { SyncOutcome } from '../sync/index.js';
import type { SelectionFlags } from '../plan/index.js';
import type { LoadedDesiredState, ServiceContext } from './app-context.js';

/** The flags that shaped a plan besides the settings: a saved plan records them. */
export interface PlanShape {
  readonly rotatePasswords?: boolean;
  readonly allowEmptyPrune?: boolean;
  readonly deleteDuplicateApikeys?: boolean;
  /** `--only`, `--exclude`, `--replace` (issue 29); absent or empty: none. */
  readonly selection?: SelectionFlags;
}

/** The selection a saved plan records: present only when a flag was given (older plans stay byte for byte). */
export function savedSelection(opts: PlanShape): { selection?: SelectionFlags } {
  const s = opts.selection;
  if (s === undefined || s.only.length + s.exclude.length + s.replace.length === 0) return {};
  return { selection: { only: [...s.only], exclude: [...s.exclude], replace: [...s.replace], ...(s.unmatchedAllowed === true ? { unmatchedAllowed: true } : {}) } };
}

/** `--out`: the plan, what it was made from, and the settings that shaped it; no secret. */
export async function savePlan(planFile: string, context: ServiceContext, loaded: LoadedDesiredState, outcome: SyncOutcome, opts: PlanShape, version: string): Promise<void> {
  // Secret file references are relative to the desired file's folder; of several files, to the first's.
  const desiredDir = dirname(resolve(loaded.files[0]?.file ?? context.file));
  const saved = toSavedPlan({
    amsyncVersion: version,
    createdAt: new Date().toISOString(),
    desiredFile: context.file,
    desiredFileHash: loaded.fileHash,
    // Several files: apply reads the same paths and names the file that moved.
    ...(loaded.files.length > 1 || context.source.paths.length > 1
      ? { desiredSources: { paths: context.source.paths, ...(context.source.recursive ? { recursive: true } : {}), files: loaded.files.map((f) => ({ file: f.file, hash: f.hash })) } }
      : {}),
    serviceUrl: context.settings.url!,
    settings: {
      prune: outcome.policy.prune,
      rotatePasswords: opts.rotatePasswords === true,
      passwordMode: outcome.policy.passwords.mode,
      allowEmptyPrune: opts.allowEmptyPrune === true,
      maxDeletes: context.settings.maxDeletes,
      ...(opts.deleteDuplicateApikeys === true ? { deleteDuplicateApikeys: true } : {}),
      ...savedSelection(opts),
      ...(outcome.policy.observe === true ? { observe: true } : {}),
    },
    actualFingerprint: outcome.actualFingerprint,
    plan: outcome.plan,
    ...approvalsOf(outcome),
    passwords: passwordReferences(outcome.plan, loaded.desired, (abs) => relative(desiredDir, abs).split('\\').join('/')),
    actual: outcome.actual,
  });
  try {
    await writeSavedPlan(resolve(planFile), saved);
  } catch (error) {
    if (!isFsError(error)) throw error;
    throw localPathError(error, { what: 'the plan file', path: resolve(planFile), setting: '--out', knob: '--out' }, { code: 'plan_unwritable' });
  }
}

/** The gated changes of a plan being saved: the review of the saved plan approves them. */
function approvalsOf(outcome: SyncOutcome): { approvals?: SavedApprovals } {
  const review = outcome.approval?.review;
  if (!review || review.gates.length === 0 || review.setHash === undefined) return {};
  return { approvals: { setHash: review.setHash, changes: review.gates.map((g) => ({ index: g.index, hash: g.hash, rules: [...g.rules] })) } };
}
