import type { DesiredState, PerKind } from '../model/index.js';
import type { ItemSelection, PasswordPolicy, PlanPolicy, SelectionFlags } from '../plan/index.js';
import { itemSelection, protectMatcher } from '../apply/index.js';
import type { PasswordState } from '../secrets/index.js';

/** What a run or a saved plan fixed; the rest of the policy comes from the desired file. */
export interface PolicyChoices {
  readonly prune: PerKind<boolean>;
  /** Deletes of undeclared items come from the file's `prune:` (not `--prune`): name it in messages. */
  readonly pruneFromFile: boolean;
  readonly passwordMode: PasswordPolicy['mode'];
  readonly deleteDuplicateApikeys: boolean;
  /** `--only`, `--exclude`, `--replace`, compiled; absent: the whole file, nothing replaced. */
  readonly selection?: ItemSelection;
  /** The service is observed as a whole (a target with `mode: observe`): nothing is planned, drift is reported. */
  readonly observe?: boolean;
}

/** The one place a PlanPolicy is made, for a sync and for a saved plan alike. */
export function policyFor(desired: DesiredState, choices: PolicyChoices): PlanPolicy {
  const pruneSource = choices.pruneFromFile ? desired.origin?.prune : undefined;
  return {
    prune: choices.prune,
    isProtected: protectMatcher(desired.protect),
    passwords: { mode: choices.passwordMode },
    deleteDuplicateApikeys: choices.deleteDuplicateApikeys,
    ...(pruneSource === undefined ? {} : { pruneSource }),
    ...(choices.selection === undefined ? {} : { selection: choices.selection }),
    ...(choices.observe === true ? { observe: true } : {}),
  };
}

/** What a sync's policy follows from: the file, the state file as opened, and the flags. */
export interface PolicyInput {
  readonly desired: DesiredState;
  readonly rotatePasswords?: boolean;
  /** `--prune`: deletes on the command line's word, not a file's. */
  readonly pruneAll?: boolean;
  readonly deleteDuplicateApikeys?: boolean;
  readonly passwordState?: PasswordState | undefined;
  /** `--only`, `--exclude`, `--replace` as given (checked when parsed: exit 64). */
  readonly selection?: SelectionFlags;
  readonly observe?: boolean;
}

export function planPolicy(input: PolicyInput): PlanPolicy {
  return policyFor(input.desired, {
    prune: input.pruneAll ? { sshUsers: true, apikeys: true } : input.desired.prune,
    pruneFromFile: input.pruneAll !== true,
    passwordMode: input.rotatePasswords ? 'rotate' : input.passwordState?.exists ? 'state' : 'create-only',
    deleteDuplicateApikeys: input.deleteDuplicateApikeys === true,
    ...selectionOf(input.selection),
    observe: input.observe === true,
  });
}

/** The compiled selection of the flags, when any was given. */
export function selectionOf(flags: SelectionFlags | undefined): { selection?: ItemSelection } {
  const selection = itemSelection(flags);
  return selection === undefined ? {} : { selection };
}
