import { InvalidInputError, SafetyError } from '../errors.js';
import type { AccessService, ActualState, ApprovalStatus, Change, ChangeResult, DesiredState, Plan } from '../model/index.js';
import { changeSelected, checkSafety, plan as makePlan, withPasswordsAvailable, type ItemSelection, type PlanPolicy } from '../plan/index.js';
import { desiredFileChanges, diffActualStates, type SavedPlan, StalePlanError } from '../saved-plan/index.js';
import { allApproved, applicablePart, checkPolicy, executeApplicable, policyRefusal } from './approvals.js';
import type { WriteRunHooks } from './run-sync.js';
import { reviewPlan } from '../policy/index.js';
import { checkSinkNames, type PasswordState } from '../secrets/index.js';
import { readActualState, stateFingerprint } from '../state/index.js';
import { type LockOutcome, type TokenError, passwordFingerprints, preflightScopes, resolveRoles, withWriterLock } from '../apply/index.js';
import { policyFor, selectionOf } from './plan-policy.js';
import { AmsyncError, UsageError } from '../errors.js';
import { declaresTtl, expiryClock, withTtlCreates } from './expiry-records.js';
import { instantText, type PlanClock } from '../model/index.js';

export interface ApplySavedInput extends WriteRunHooks {
  readonly saved: SavedPlan;
  /** The plan file as given, for messages. */
  readonly planFile: string;
  /** The desired file (as given) and its content, loaded again: passwords are resolved now. */
  readonly desiredFile: string;
  readonly desired: DesiredState;
  readonly desiredFileHash: string;
  /** Each desired file read now, with its hash: names the one that moved when the plan is stale. */
  readonly desiredFiles?: readonly { readonly file: string; readonly hash: string }[];
  readonly service: AccessService;
  /** Opens the state file once the writer lock is held (see SyncInput.passwordState). */
  readonly passwordState?: () => Promise<PasswordState>;
  /**
   * Fleet: called once every check passed (fresh listing, same changes, guards), with the lock
   * held, before anything is written; false writes nothing (`cancelled`). A saved fleet plan
   * waits here until every target is checked, so a stale one stops them all.
   */
  readonly beforeApply?: () => Promise<boolean>;
  /**
   * The wall clock (ms) expiries are checked against when the plan is verified: an item that
   * expired since the plan was made refuses it (plan again). @default Date.now
   */
  readonly now?: () => number;
}

export interface ApplySavedOutcome extends LockOutcome {
  /** Role names by id, when the file names roles. */
  readonly roleNames?: ReadonlyMap<number, string>;
  readonly plan: Plan;
  readonly actual: ActualState;
  readonly policy: PlanPolicy;
  readonly results: readonly ChangeResult[];
  readonly tokensWritten: number;
  /** The state file could not be written after the apply (see ExecuteOutcome). */
  readonly stateSaveError?: unknown;
  /** Declared keys whose token file could not be kept current (see ExecuteOutcome). */
  readonly tokenErrors: readonly TokenError[];
  /** The changes the policy gates, all approved by the review of the saved plan. */
  readonly approval: ApprovalStatus;
  /** beforeApply said no: nothing was written. */
  readonly cancelled?: boolean;
}

/**
 * Checks that need no request: the snapshot still matches its fingerprint (else the file is
 * damaged: 65), and the plan was made by this amsync (another version may plan differently:
 * refused, 3). Run before the desired file is even read.
 */
export function checkSavedPlan(saved: SavedPlan, planFile: string, amsyncVersion: string): void {
  if (stateFingerprint(saved.actual) !== saved.actualFingerprint) {
    throw new InvalidInputError(`${planFile} is a damaged or edited amsync plan: its listing snapshot does not match its actualFingerprint; plan again`, [], 'plan_invalid');
  }
  if (saved.amsyncVersion !== amsyncVersion) {
    throw new SafetyError(
      'plan_mismatch',
      `${planFile} was made by amsync ${saved.amsyncVersion}, and this is amsync ${amsyncVersion}, which may plan differently; nothing was written; plan again with this version (or apply with ${saved.amsyncVersion})`,
    );
  }
}

/**
 * The desired file must be byte for byte the one the plan was made from; of several files,
 * every one of them, and no other (`files`: those read now, to name the ones that moved).
 */
export function checkDesiredFileHash(saved: SavedPlan, planFile: string, desiredFile: string, hash: string, files?: readonly { file: string; hash: string }[]): void {
  if (hash === saved.desiredFileHash) return;
  const before = saved.desiredSources?.files;
  const changed = before !== undefined && files !== undefined ? desiredFileChanges(before, files) : undefined;
  throw new StalePlanError(planFile, { reason: 'desired_file', desiredFile, ...(changed && changed.length > 0 ? { files: changed } : {}) });
}

/**
 * `amsync apply PLANFILE`: re-lists the service and applies exactly the saved changes, with
 * the same drift handling, state file and token files as a sync, or refuses (nothing
 * written) when the service moved since the plan was made, saying what moved.
 */
export async function applySavedPlan(input: ApplySavedInput): Promise<ApplySavedOutcome> {
  checkDesiredFileHash(input.saved, input.planFile, input.desiredFile, input.desiredFileHash, input.desiredFiles);
  checkSinkNames(input.desired, input.tokenSink);
  if (!input.acquireLock) return applyFresh(input, input.signal);
  return withWriterLock(input.acquireLock, input.signal, (signal) => applyFresh(input, signal));
}

async function applyFresh(input: ApplySavedInput, signal: AbortSignal | undefined): Promise<ApplySavedOutcome> {
  const { saved, planFile } = input;
  // Names resolve now: a role renamed since the plan gives other ids, and the check below refuses.
  const { desired, roleNames } = await resolveRoles(input.desired, input.service);
  checkPolicy(desired);
  const { state: actual, tokens } = await readActualState(input.service);
  if (stateFingerprint(actual) !== saved.actualFingerprint) {
    throw new StalePlanError(planFile, { reason: 'service', changes: diffActualStates(saved.actual, actual) });
  }
  // Deletes of undeclared items come from the file's prune:, unless --prune made the plan.
  const pruneFromFile = saved.settings.prune.sshUsers === desired.prune.sshUsers && saved.settings.prune.apikeys === desired.prune.apikeys;
  const policy = policyFor(desired, {
    prune: saved.settings.prune,
    pruneFromFile,
    passwordMode: saved.settings.passwordMode,
    deleteDuplicateApikeys: saved.settings.deleteDuplicateApikeys === true,
    ...savedSelection(input),
    observe: saved.settings.observe === true,
  });
  // Expiries are planned at apply time (issue 30): an item that expired since is deleted by a new
  // plan, never created by this one. A `ttl:` counts from the create time the state file keeps.
  const wallNow = input.now ?? Date.now;
  const forTtl = declaresTtl(desired) ? await input.passwordState?.() : undefined;
  const clock = expiryClock(desired, actual, forTtl, wallNow(), true);
  verifyExpiries(input, clock.now);
  verifyChanges({ ...input, desired }, actual, policy, clock);
  // A plan made without some passwords (`--secrets optional`) did not check their drift: with
  // them, now, it must still be the whole plan. Opened here only for such a plan (else below, as before).
  const early = forTtl ?? (saved.plan.passwordsUnavailable ? await input.passwordState?.() : undefined);
  if (saved.plan.passwordsUnavailable) verifyUncheckedPasswords({ ...input, desired }, actual, policy, early);
  const refusal = checkSafety(saved.plan, desired, policy, { maxDeletes: saved.settings.maxDeletes, allowEmptyPrune: saved.settings.allowEmptyPrune });
  if (refusal) throw refusal;
  // The same file, the same listing, the same changes: the policy must gate the same ones.
  // The review of the saved plan was their approval (README, "Teams and governance").
  const review = reviewPlan(saved.plan, actual, desired.policy);
  const policyRefused = policyRefusal(review);
  if (policyRefused) throw policyRefused;
  verifyApprovals(input, review.setHash, review.gates.map((g) => g.hash));
  const approval = allApproved(saved.plan, actual, review);
  const part = applicablePart(saved.plan, approval);
  await preflightScopes(saved.plan, input.service);
  if (input.beforeApply && !(await input.beforeApply())) {
    return { ...(roleNames === undefined ? {} : { roleNames }), plan: saved.plan, actual, policy, results: [], tokensWritten: 0, tokenErrors: [], cancelled: true, approval };
  }

  const passwordState = early ?? (await input.passwordState?.());
  const { results, tokensWritten, tokenErrors, stateSaveError } = await executeApplicable(part, {
    desired,
    actual,
    tokens,
    policy,
    service: input.service,
    passwordState,
    fingerprints: passwordFingerprints(desired, passwordState),
    tokenSink: input.tokenSink,
    onResult: withTtlCreates(desired, passwordState, wallNow, input.onResult),
    onAttempt: input.onAttempt,
    signal,
    maxInFlight: input.maxInFlight,
    lateCreate: input.lateCreate,
  });
  return {
    ...(roleNames === undefined ? {} : { roleNames }),
    // Reported with the passwords this run had: no "not available" note or marks.
    plan: withPasswordsAvailable(saved.plan),
    actual,
    policy,
    results,
    tokensWritten,
    tokenErrors,
    approval,
    ...(stateSaveError === undefined ? {} : { stateSaveError }),
  };
}

/**
 * Same file, same listing, same settings: the pure planner must give the saved changes again.
 * When it does not, the plan file was edited (or another planner made it), and what would be
 * applied is not what this file and this service call for: refuse. Password updates are left
 * out of the comparison: they depend on the state file of the machine that planned.
 */
function verifyChanges(input: ApplySavedInput, actual: ActualState, policy: PlanPolicy, clock: PlanClock): void {
  if (policy.selection !== undefined) verifyInsideSelection(input, policy.selection);
  let fresh: Plan;
  try {
    fresh = makePlan(input.desired, actual, policy, undefined, clock);
  } catch (error) {
    // An address of the plan's selection that names nothing now (or a --replace it cannot do):
    // the selection cannot be reproduced, so neither can the plan.
    if (!(error instanceof UsageError)) throw error;
    throw new SafetyError('plan_mismatch', `${input.planFile}: its selection cannot be reproduced (${error.message}); nothing was written; plan again`);
  }
  const saved = comparable(input.saved.plan.changes);
  const now = comparable(fresh.changes);
  if (saved.length === now.length && saved.every((c, i) => c === now[i])) return;
  throw new SafetyError(
    'plan_mismatch',
    `${input.planFile}: its changes are not the ones ${input.desiredFile} and the service call for (the plan file was edited?); nothing was written; plan again`,
  );
}

/**
 * An expiry the saved plan lists as ahead has passed since (issue 30): the plan no longer says
 * what to do with the item (it is to be deleted, and never created): refuse, and say why.
 */
function verifyExpiries(input: ApplySavedInput, now: number): void {
  const passed = (input.saved.plan.expiries ?? []).filter((e) => Date.parse(e.expiresAt) <= now);
  if (passed.length === 0) return;
  const names = passed.map((e) => `${e.kind} "${e.key}" at ${instantText(Date.parse(e.expiresAt))}`).join(', ');
  throw new SafetyError('plan_mismatch', `${input.planFile}: ${names} expired since the plan was made; nothing was written; plan again (its delete is planned then)`);
}

/**
 * A plan saved by `plan --secrets optional` without some passwords: their drift was not
 * checked, so the plan may lack a password update a plan with the secrets would have. Apply
 * has the secrets (it refuses to run without them): when one of those users' password differs
 * from the one amsync last set, the plan is not the one to apply: refuse, nothing written.
 */
function verifyUncheckedPasswords(input: ApplySavedInput, actual: ActualState, policy: PlanPolicy, passwordState: PasswordState | undefined): void {
  const unchecked = new Set(input.saved.plan.passwordsUnavailable?.driftNotChecked ?? []);
  if (unchecked.size === 0) return;
  const fresh = makePlan(input.desired, actual, policy, passwordFingerprints(input.desired, passwordState));
  const changed = fresh.changes.filter((c) => c.kind === 'sshUser' && c.action === 'update' && 'password' in c.fields && unchecked.has(c.key)).map((c) => c.key);
  if (changed.length === 0) return;
  const names = changed.map((k) => JSON.stringify(k)).join(', ');
  throw new SafetyError(
    'plan_mismatch',
    `${input.planFile} was made without some passwords (--secrets optional), so it did not check their drift, and the password of SSH user${changed.length === 1 ? '' : 's'} ${names} differs from the one amsync last set: this plan would not update ${changed.length === 1 ? 'it' : 'them'}; nothing was written; plan again with the secrets`,
  );
}

/**
 * A saved plan's selection (`--only`, `--exclude`, `--replace`), compiled again. An address
 * that does not parse means the file was edited: refused as damaged (exit 65).
 */
function savedSelection(input: ApplySavedInput): { selection?: ItemSelection } {
  try {
    return selectionOf(input.saved.settings.selection);
  } catch (error) {
    if (!(error instanceof AmsyncError)) throw error;
    throw new InvalidInputError(`${input.planFile} is a damaged or edited amsync plan: its selection does not parse (${error.message}); plan again`, [], 'plan_invalid');
  }
}

/**
 * Every saved change lies inside the saved selection: a change of an item the selection
 * leaves out (or a replacement nobody asked for) means the plan file was edited. Checked on
 * the saved changes themselves, before the fresh plan is compared with them.
 */
function verifyInsideSelection(input: ApplySavedInput, selection: ItemSelection): void {
  const replacing = selection.replace.length > 0;
  for (const c of input.saved.plan.changes) {
    if (changeSelected(selection, c) && (replacing || (c.replaces === undefined && c.replaced !== true))) continue;
    throw new SafetyError(
      'plan_mismatch',
      `${input.planFile}: it changes ${c.kind} "${c.key}", which its selection (${[...selection.only.map((a) => `--only ${a.text}`), ...selection.exclude.map((a) => `--exclude ${a.text}`)].join(' ') || 'none'}) leaves out (the plan file was edited?); nothing was written; plan again`,
    );
  }
}

/** The approvals recorded in the plan file are the ones the policy gives now; else it was edited. */
function verifyApprovals(input: ApplySavedInput, setHash: string | undefined, hashes: readonly string[]): void {
  const saved = input.saved.approvals;
  const same = saved === undefined ? setHash === undefined : saved.setHash === setHash && saved.changes.length === hashes.length && saved.changes.every((c, i) => c.hash === hashes[i]);
  if (same) return;
  throw new SafetyError(
    'plan_mismatch',
    `${input.planFile}: the changes it records as needing approval are not the ones the policy in ${input.desiredFile} gates (the plan file was edited?); nothing was written; plan again`,
  );
}

function comparable(changes: readonly Change[]): string[] {
  const out: string[] = [];
  for (const c of changes) {
    const fields = Object.entries(c.fields)
      .filter(([name]) => name !== 'password' || c.action === 'create')
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    if (c.action === 'update' && fields.length === 0) continue;
    // A replacement's link is part of the change: a create made into a replacement (or back) differs.
    const link = c.replaces !== undefined ? [c.replaces] : c.replaced === true ? ['replaced'] : [];
    out.push(JSON.stringify([c.kind, c.action, c.key, c.id, fields, ...link]));
  }
  return out;
}
