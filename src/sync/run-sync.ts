import type { SafetyError } from '../errors.js';
import type { AccessService, ActualState, ApprovalStatus, Change, ChangeResult, DesiredState, Plan } from '../model/index.js';
import { checkSafety, plan as makePlan, retiringKeys, type PlanPolicy, type SelectionFlags } from '../plan/index.js';
import { checkSinkNames, type PasswordState, type SecretSink } from '../secrets/index.js';
import { readActualState, stateFingerprint } from '../state/index.js';
import { type LateCreateLooks, type TokenError, generatedPasswordFacts, passwordFingerprints, preflightScopes, resolveRoles, withWriterLock, type LockAcquirer, type LockOutcome } from '../apply/index.js';
import { planPolicy } from './plan-policy.js';
import { approvalStatus, applicablePart, checkPolicy, executeApplicable, policyRefusal, withApprovals } from './approvals.js';
import { expiryClock, withTtlCreates } from './expiry-records.js';
import { adoptInterruptedSuccessors, keysAfter, rotationWake, withAdopted } from './interrupted-rotations.js';

/** What a run that writes takes besides the plan: where results go, the lock, the pace, the stop. */
export interface WriteRunHooks {
  readonly tokenSink?: SecretSink;
  /** Called for each result as it is known (logs, metrics, the audit log). */
  readonly onResult?: (result: ChangeResult) => void;
  /** Told before each write request is sent (the audit log). */
  readonly onAttempt?: (change: Change) => void;
  /** The writer lock, taken before the service is listed, held to the end of the run. */
  readonly acquireLock?: LockAcquirer;
  /** Changes written at once (the client's concurrency). */
  readonly maxInFlight?: number;
  /** No write starts once this fires (interrupt, lost lease, run deadline). */
  readonly signal?: AbortSignal;
  /** Further looks for a lost apikey create, while the lock is held (ApplyOptions.lateCreate). */
  readonly lateCreate?: LateCreateLooks;
}

export interface SyncInput extends WriteRunHooks {
  readonly desired: DesiredState;
  readonly service: AccessService;
  /**
   * Opens the state file; undefined when none is configured (passwords then set on create
   * only). Called once the writer lock is held: a copy read before it may predate another
   * writer's run, and saving it would drop that run's fingerprints (and, with a generated
   * key, replace its key).
   */
  readonly passwordState?: () => Promise<PasswordState>;
  readonly rotatePasswords?: boolean;
  /** `--prune`: prune both kinds whatever the file says. */
  readonly pruneAll?: boolean;
  readonly maxDeletes: number;
  readonly allowEmptyPrune?: boolean;
  /** `--delete-duplicate-apikeys`. */
  readonly deleteDuplicateApikeys?: boolean;
  /** `--only`, `--exclude`, `--replace` (issue 29): a partial plan, items replaced. */
  readonly selection?: SelectionFlags;
  /** The service is observed as a whole (a target with `mode: observe`): drift is reported, nothing written. */
  readonly observe?: boolean;
  readonly dryRun: boolean;
  /**
   * The wall clock (ms since the epoch) expiries are planned against (`expires:`, `ttl:`); the
   * daemon passes its own (virtual in tests). @default Date.now
   */
  readonly now?: () => number;
  /**
   * Approvals given for this run (`--approve`, the daemon's approvals file): change hashes, or
   * the hash of the whole set of changes that need one (README, "Teams and governance"). A change the policy
   * gates is applied only when one of them covers it; the others are applied regardless.
   */
  readonly approvals?: Iterable<string>;
  /**
   * Called with the plan once the guards passed, before anything is written: the CLI shows
   * the plan there and, at a terminal, asks. false cancels the run with nothing written;
   * `{ approve }` goes ahead with these approvals added (hashes typed at the prompt).
   */
  readonly beforeApply?: (plan: Plan, roleNames: ReadonlyMap<number, string> | undefined, approval: ApprovalStatus) => Promise<boolean | ApprovalAnswer>;
}

/** What the prompt may answer besides yes and no: approvals typed there. */
export interface ApprovalAnswer {
  readonly approve: readonly string[];
}

export interface SyncOutcome extends LockOutcome {
  /** Role names by id, when the file names roles (the roles listing was read). */
  readonly roleNames?: ReadonlyMap<number, string>;
  readonly actual: ActualState;
  /** Hash of the listing the plan was computed from (saved plans compare it). */
  readonly actualFingerprint: string;
  readonly plan: Plan;
  readonly policy: PlanPolicy;
  /** Set when a safety guard refused the plan; nothing was applied. */
  readonly refusal?: SafetyError;
  /** Present when the plan was applied. */
  readonly results?: readonly ChangeResult[];
  readonly tokensWritten: number;
  /** The state file could not be written after the apply (see ExecuteOutcome). */
  readonly stateSaveError?: unknown;
  /** When a declared key's next rotation falls due or its overlap ends (wall ms): the daemon wakes then. Absent: none ahead. */
  readonly rotationWakeAt?: number;
  /** Declared keys whose token file could not be kept current (see ExecuteOutcome). */
  readonly tokenErrors?: readonly TokenError[];
  /** beforeApply said no: nothing was written. */
  readonly cancelled?: boolean;
  /**
   * What the policy said about the plan: the changes that need approval (with their hashes),
   * which were approved, and which were withheld (not written). Absent only from outcomes made
   * before the policy was evaluated (a refusal of another guard has it too).
   */
  readonly approval?: ApprovalStatus;
}

/**
 * One reconcile: list, plan, guard, and (unless a dry-run) apply. A dry-run is simply this
 * without the last step: the plan shown is the plan that would be applied.
 */
export async function runSync(input: SyncInput): Promise<SyncOutcome> {
  // An item whose secret the sink could not store: refused before any request (exit 65).
  if (input.observe !== true) checkSinkNames(input.desired, input.tokenSink);
  // Held from before the listing: a writer that listed before another's creates landed
  // would create the same apikeys again (their names are not unique on the service).
  if (input.dryRun || !input.acquireLock) return reconcile(input, input.signal);
  return withWriterLock(input.acquireLock, input.signal, (signal) => reconcile(input, signal));
}

async function reconcile(input: SyncInput, signal: AbortSignal | undefined): Promise<SyncOutcome> {
  // Opened once the writer lock is held: a writer that waited must not save a copy read
  // before the first writer's fingerprints were written.
  const passwordState = await input.passwordState?.();
  const { desired, roleNames } = await resolveRoles(input.desired, input.service);
  // Again now that role names are ids: a forbidden role written by name on one side and by id
  // on the other is caught here (exit 65, nothing listed or written).
  checkPolicy(desired);
  const names = roleNames === undefined ? {} : { roleNames };
  const { state: actual, tokens } = await readActualState(input.service, { tokens: input.tokenSink !== undefined });
  const policy = planPolicy({ ...input, desired, passwordState });
  const wallNow = input.now ?? Date.now;
  // A successor's create that a killed run began: its twin taken as the successor, its token written first.
  const interrupted = await adoptInterruptedSuccessors(actual, tokens, passwordState, input.tokenSink, wallNow(), input.dryRun);
  const clock = withAdopted(expiryClock(desired, actual, passwordState, wallNow(), input.dryRun), interrupted.adopted);
  // An adopted item's ttl start, recorded now, is kept even when nothing else is written.
  if (!input.dryRun && passwordState?.dirty === true) await passwordState.save();
  // Generated passwords: their records, their sink files and the clock, read here so that the planner stays pure.
  const generated = await generatedPasswordFacts(desired, actual, passwordState, input.tokenSink?.passwordSink?.(), wallNow());
  const fingerprints = generated === undefined ? passwordFingerprints(desired, passwordState) : { ...passwordFingerprints(desired, passwordState), generated };
  const planned = makePlan(desired, actual, policy, fingerprints, clock);
  // Adopted successors, and why a twin could not be (the planner then reports the name ambiguous).
  const adoptionNotes = [...interrupted.notes, ...interrupted.unresolved];
  const plan = adoptionNotes.length === 0 ? planned : { ...planned, notes: [...planned.notes, ...adoptionNotes] };
  // Only a saved plan carries the fingerprint (`plan --out`): hashed when first read, not on every run.
  let fingerprint: string | undefined;
  const listed = <R extends object>(rest: R) => ({
    ...rest,
    actual,
    get actualFingerprint(): string {
      return (fingerprint ??= stateFingerprint(actual));
    },
  });
  let approval = approvalStatus(plan, actual, desired.policy, input.approvals ?? []);
  const refusal = checkSafety(plan, desired, policy, { maxDeletes: input.maxDeletes, allowEmptyPrune: input.allowEmptyPrune ?? false }) ?? policyRefusal(approval.review);
  // An adopted successor's token was written before the guards and the question (no request:
  // the local half of a rotation a killed run began): counted whatever follows (0 in a dry-run).
  if (refusal || input.dryRun) return listed({ ...names, plan, policy, refusal, tokensWritten: interrupted.written, approval, ...rotationWake(desired, actual.apikeys, clock) });
  await preflightScopes(plan, input.service);
  if (input.beforeApply) {
    const answer = await input.beforeApply(plan, roleNames, approval);
    if (answer === false) return listed({ ...names, plan, policy, tokensWritten: interrupted.written, cancelled: true, approval, ...rotationWake(desired, actual.apikeys, clock) });
    if (answer !== true) approval = withApprovals(approval, plan, actual, answer.approve);
  }

  // Changes that need an approval and have none are not written, nor what waits for them.
  const part = applicablePart(plan, approval);
  const { results, tokensWritten, tokenErrors, stateSaveError } = await executeApplicable(part, {
    desired,
    actual,
    tokens,
    policy,
    service: input.service,
    passwordState,
    fingerprints,
    tokenSink: input.tokenSink,
    onResult: withTtlCreates(desired, passwordState, wallNow, input.onResult),
    onAttempt: input.onAttempt,
    signal,
    maxInFlight: input.maxInFlight,
    lateCreate: input.lateCreate,
    retiring: new Set(retiringKeys(actual.apikeys, clock, desired.apikeys).keys()),
    now: wallNow,
  });
  return listed({
    ...names,
    plan,
    policy,
    results,
    tokensWritten: tokensWritten + interrupted.written,
    tokenErrors,
    approval,
    ...(stateSaveError === undefined ? {} : { stateSaveError }),
    // The keys and records as this run left them: a successor just created starts its overlap now.
    ...rotationWake(desired, keysAfter(actual.apikeys, results), withAdopted(expiryClock(desired, actual, passwordState, wallNow(), true), interrupted.adopted)),
  });
}

