import type { Kind, PerKind, SourcePosition } from '../model/index.js';
import type { ItemSelection } from './item-selection.js';

/**
 * Everything besides the two states that shapes a plan. Built by the caller (which may use
 * a glob library and a clock); the planner only calls what it is given.
 */
export interface PlanPolicy {
  /** Effective prune per kind: the file's `prune`, or `--prune`. */
  readonly prune: PerKind<boolean>;
  /** True when a protect glob covers this key. */
  readonly isProtected: (kind: Kind, key: string) => boolean;
  readonly passwords: PasswordPolicy;
  /**
   * `--delete-duplicate-apikeys`: of several remote apikeys that carry one declared name, keep
   * the pinned one (else the oldest: the lowest id) and delete the others, inside the deletion
   * budget. Off: such a name is an ambiguity the user resolves by pinning an id.
   */
  readonly deleteDuplicateApikeys?: boolean;
  /**
   * Where the `prune:` that deletes undeclared items is written: the source of those deletes.
   * Absent under `--prune`, or when it is not known.
   */
  readonly pruneSource?: SourcePosition;
  /**
   * `--only`, `--exclude`, `--replace` (issue 29): the plan of the whole file is made first,
   * then items are replaced and the changes of unselected items left out (targeted-plan.ts).
   * Absent: the whole file, nothing replaced.
   */
  readonly selection?: ItemSelection;
  /**
   * The whole service is observed (a target with `mode: observe`): every change is reported in
   * Plan.observed and none is planned, deletes included. Absent: only items with `mode: observe`.
   */
  readonly observe?: boolean;
}

/**
 * Passwords are write-only: the service never returns them, so drift is detected by
 * comparing fingerprints (HMAC-SHA256) of the declared password with the last applied one.
 */
export interface PasswordPolicy {
  /**
   * `state`: compare fingerprints from the state file;
   * `create-only`: there is no state file, so passwords are set when a user is created only;
   * `rotate`: set every declared password (`--rotate-passwords`).
   */
  readonly mode: 'state' | 'create-only' | 'rotate';
}

/** Fingerprints by username: of the declared passwords, and of the last applied ones. */
export interface PasswordFingerprints {
  readonly desired: ReadonlyMap<string, string>;
  readonly applied: ReadonlyMap<string, string>;
  /** Generated passwords (`password: {generate: …}`): what the state file and the sink say. Absent: none declared. */
  readonly generated?: GeneratedPasswordFacts;
}

/**
 * What the planner needs to know about generated passwords, read by the caller (the state
 * file, the password sink, the clock): the planner stays pure and is given `now`.
 */
export interface GeneratedPasswordFacts {
  /** Epoch milliseconds: a rotation is due when `now - setAt >= every`. */
  readonly now: number;
  /** By SSH user id (as a string): when amsync last set a generated password, and whether the sink lost it. */
  readonly records: ReadonlyMap<string, GeneratedRecord>;
  /** Usernames whose sink file is missing or holds another password than the one amsync set. */
  readonly notInSink: ReadonlySet<string>;
}

export interface GeneratedRecord {
  /** Epoch milliseconds of the write that set it. */
  readonly setAt: number;
  /** Set on the service, but the sink write failed: nobody has it; the next run sets a new one. */
  readonly lost?: true;
}

export const noFingerprints: PasswordFingerprints = { desired: new Map(), applied: new Map() };
