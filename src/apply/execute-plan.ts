import type { AccessService, ActualState, Change, ChangeResult, DesiredApikey, DesiredState, Plan, SecretValue } from '../model/index.js';
import type { PasswordFingerprints, PlanPolicy } from '../plan/index.js';
import { fingerprint, type TokenFile, type SecretSink } from '../secrets/index.js';
import { keepGeneratedPassword } from './keep-generated-password.js';
import type { PasswordState } from '../secrets/index.js';
import type { ActualStateRead } from '../state/index.js';
import { applyPlan } from './apply-plan.js';
import type { LateCreateLooks } from './late-create.js';
import { StateSaver } from './state-saver.js';
import { AmsyncError } from '../errors.js';

export interface ExecuteInput {
  readonly plan: Plan;
  readonly desired: DesiredState;
  /** The listing the plan was computed from, with the tokens it carried. */
  readonly actual: ActualState;
  readonly tokens: ActualStateRead['tokens'];
  readonly policy: PlanPolicy;
  readonly service: AccessService;
  readonly passwordState?: PasswordState;
  /** The fingerprints the plan was made with (declared and last applied passwords). */
  readonly fingerprints: PasswordFingerprints;
  readonly tokenSink?: SecretSink;
  readonly onResult?: (result: ChangeResult) => void;
  /** Told before each write request is sent (the audit log). */
  readonly onAttempt?: (change: Change) => void;
  /** No write starts once this fires (interrupt, lost lock or lease, run deadline). */
  readonly signal?: AbortSignal;
  /** Changes written at once (the client's concurrency). */
  readonly maxInFlight?: number;
  /** Further looks for a lost apikey create (ApplyOptions.lateCreate). */
  readonly lateCreate?: LateCreateLooks;
  /** Predecessors of apikeys in rotation: not the owner of their name's token file. */
  readonly retiring?: ReadonlySet<number>;
  /** The clock of the state file's records. @default Date.now */
  readonly now?: () => number;
}

export interface ExecuteOutcome {
  readonly results: readonly ChangeResult[];
  readonly tokensWritten: number;
  /**
   * Set when the state file could not be written (a full disk): the results stand (they
   * happened on the service), but fingerprints of passwords set by this run are not kept.
   */
  readonly stateSaveError?: unknown;
  /**
   * Declared keys whose token file could not be written (something other than a regular file
   * sits there): kept current for a key without a change, or given a key created in this run
   * (whose create is applied all the same: the service has the key).
   */
  readonly tokenErrors: readonly TokenError[];
}

export interface TokenError {
  /** The apikey's declared name. */
  readonly key: string;
  /** One line, no secret. */
  readonly error: string;
}

/**
 * Applies a plan and keeps what lives beside the service: applied password fingerprints (the
 * state file) and apikey token files. Shared by `sync` and `amsync apply PLANFILE`, so a saved
 * plan is applied exactly as a sync would apply it.
 */
export async function executePlan(input: ExecuteInput): Promise<ExecuteOutcome> {
  let tokensWritten = 0;
  const sink = input.tokenSink;
  const passwordSink = sink?.passwordSink?.();
  // True when the sink holds the token now (written, or its file already had it).
  const writeToken = async (name: string, token: SecretValue): Promise<boolean> => {
    if (!sink) return false;
    if (await sink.write(name, token)) tokensWritten += 1;
    return true;
  };
  const state = input.passwordState;
  const saver = state && new StateSaver(state);
  // Names whose token this run received from a create: fresher than the listing's.
  const written = new Set<string>();
  const tokenErrors: TokenError[] = [];
  const results = await applyPlan(input.plan, {
    writer: input.service,
    desired: input.desired,
    actual: input.actual,
    policy: input.policy,
    passwords: state && {
      record: (id, password) => {
        state.record(id, fingerprint(state.key, password));
        saver?.touch();
      },
      forget: (id) => {
        state.forget(id);
        saver?.touch();
      },
    },
    onToken: async (name, token) => {
      written.add(name);
      // The key exists on the service whatever happens to its file: the change is applied, and
      // the file that could not be written is reported beside it (exit 1), as for any key.
      return writeToken(name, token).catch((error: unknown) => {
        tokenErrors.push({ key: name, error: error instanceof Error ? error.message : String(error) });
        return false;
      });
    },
    // Generated passwords go to the sink's place for them (tokensDir/passwords~, or the Secret's password__ keys).
    ...(passwordSink === undefined ? {} : { onGeneratedPassword: keepGeneratedPassword(passwordSink, state, saver) }),
    ...(state && saver ? { beforeSuccessor: recordSuccessorStart(state, saver, input.now ?? Date.now) } : {}),
    fingerprints: input.fingerprints,
    onResult: state && saver ? saveRotationRecords(state, saver, input.onResult) : input.onResult,
    onAttempt: input.onAttempt,
    signal: input.signal,
    maxInFlight: input.maxInFlight,
    lateCreate: input.lateCreate,
  });
  const stateSaveError = await saver?.flush();
  if (sink) {
    // Keep the token files of every declared key current, not only of new ones: a sidecar
    // then repairs a deleted or stale file at its next run. Each file is read, and written
    // only when it differs (at 100k keys, read together: TokenSink.keepCurrent).
    const retiring = input.retiring;
    const listed = retiring === undefined || retiring.size === 0 ? input.actual : { ...input.actual, apikeys: input.actual.apikeys.filter((k) => !retiring.has(k.id)) };
    const kept = await sink.keepCurrent(tokenFiles(ownedKeyIds(input.desired, listed), input.tokens, written));
    tokensWritten += kept.written;
    for (const { name, error } of kept.errors) tokenErrors.push({ key: name, error: error.message });
  }
  return { results, tokensWritten, tokenErrors, ...(stateSaveError === undefined ? {} : { stateSaveError }) };
}

/**
 * Before a successor's create is sent, the state file records (on disk) that it begins: a run
 * killed after the POST leaves a twin of the key that the next run recognises by it
 * (sync/interrupted-rotations.ts) instead of stopping at an ambiguity.
 */
function recordSuccessorStart(state: PasswordState, saver: StateSaver, now: () => number): (change: Change) => Promise<void> {
  return async (change) => {
    if (state.recordRotationIntent === undefined || change.replaces === undefined) return;
    state.recordRotationIntent(change.replaces, { name: change.key, startedAt: now() });
    try {
      await saver.saveNow();
    } catch (error) {
      throw new AmsyncError('state_file_unwritable', `apikey "${change.key}": the state file could not record that its successor is being created, so the create was not sent: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  };
}

/**
 * A successor's rotation record, and the end of a successor's create (the predecessor deleted),
 * saved as they are known rather than at the end of the run: a run killed between a rotation's
 * create and its predecessor's delete leaves them on disk.
 */
function saveRotationRecords(state: PasswordState, saver: StateSaver, onResult: ((r: ChangeResult) => void) | undefined): (r: ChangeResult) => void {
  return (r) => {
    onResult?.(r);
    if (r.kind !== 'apikey') return;
    if (r.action === 'create' && r.replaces !== undefined && r.status !== 'applied') {
      // A successor's create that failed or was never sent ended in this run: its intent goes,
      // or the next run would take any key of that name (one made by hand) for the successor.
      state.recordRotationIntent?.(r.replaces, null);
      saver.touch();
      return;
    }
    if (r.status !== 'applied') return;
    if (r.action === 'delete' && typeof r.id === 'number') {
      // A deleted key is no one's predecessor any more: its rotation record and intent go.
      state.recordRotating?.(r.id, null);
      state.recordRotationIntent?.(r.id, null);
      // Nor anyone's successor: a key the service later gives its id is not that predecessor's.
      for (const [predecessor, record] of [...(state.rotating ?? [])]) if (record.successor === r.id) state.recordRotating?.(Number(predecessor), null);
    }
    // A successor recorded as its predecessor's (a rotation): its create has ended.
    if (r.action === 'create' && r.replaces !== undefined && state.rotating?.get(String(r.replaces))?.successor === r.id) state.recordRotationIntent?.(r.replaces, null);

    if (r.replaces !== undefined || r.action === 'delete') saver.touch();
  };
}

/** The token file of each owned key, with the token the listing gave it. */
function* tokenFiles(owned: Iterable<readonly [string, number]>, tokens: ExecuteInput['tokens'], written: ReadonlySet<string>): Generator<TokenFile, void, undefined> {
  for (const [name, id] of owned) {
    // A key created during this run (again, after a 404 on its update) has a new token;
    // the listing's is the old key's, which no longer exists.
    if (written.has(name)) continue;
    const token = tokens.get(id);
    if (token) yield { name, token };
  }
}

/**
 * The remote id behind each declared key's token file, matched as the planner matches: a
 * pinned id, else the one remote key with that name that no pin claims. A name declared twice
 * (each with its own pin) or carried by several remote keys has no single owner, so its file
 * is left alone rather than given another key's token. Yields `[name, id]` in the declared
 * order, as the token sink reads them.
 */
export function* ownedKeyIds(desired: DesiredState, actual: ActualState): Generator<readonly [string, number], void, undefined> {
  // Linear in both lists (it runs on every sync with tokensDir, over every declared key), and
  // two maps: the pairs are yielded, not collected in a third (at 100k keys in one process,
  // 70–100 ms against 130–300 ms with the third map).
  // Per declared name: its one declaration, or null when it is declared more than once.
  const declared = new Map<string, DesiredApikey | null>();
  const pinned = new Set<number>();
  // Former names (renamedFrom:): a key renamed in place keeps its token, so its file under
  // the new name gets the listed token in the run that renames it.
  const former = new Set<string>();
  for (const k of desired.apikeys) {
    if (k.ensure !== 'present') continue;
    declared.set(k.name, declared.has(k.name) ? null : k);
    if (k.id !== undefined) pinned.add(k.id);
    for (const name of k.renamedFrom ?? []) former.add(name);
  }
  // The one remote key carrying each declared name that no pin claims; null when several do.
  const unpinnedByName = new Map<string, number | null>();
  for (const a of actual.apikeys) {
    if (!(declared.has(a.name) || former.has(a.name)) || (pinned.size > 0 && pinned.has(a.id))) continue;
    unpinnedByName.set(a.name, unpinnedByName.has(a.name) ? null : a.id);
  }
  for (const [name, k] of declared) {
    if (k === null) continue;
    const id = k.id ?? (unpinnedByName.has(name) ? unpinnedByName.get(name) : formerOwner(k, declared, unpinnedByName));
    if (typeof id === 'number') yield [name, id];
  }
}

/**
 * The remote key a declared one is renamed from, as the planner claims it: the one unpinned key
 * carrying its first former name that one does carry, unless that name is declared itself.
 */
function formerOwner(k: DesiredApikey, declared: ReadonlyMap<string, unknown>, unpinnedByName: ReadonlyMap<string, number | null>): number | null | undefined {
  for (const name of k.renamedFrom ?? []) {
    if (declared.has(name) || !unpinnedByName.has(name)) continue;
    return unpinnedByName.get(name);
  }
  return undefined;
}
