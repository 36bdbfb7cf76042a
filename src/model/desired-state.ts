import type { SecretRef, SecretValue } from './secret-value.js';
import type { SourcePosition } from './source-position.js';

export type Ensure = 'present' | 'absent';

/**
 * Which targets of a fleet an item is for (`targets:` in the desired file, DESIGN.md §9): a
 * list of target names, or labels every selected target carries (ANDed). Only meaningful with
 * a targets file (`--targets`); absent: every target.
 */
export type TargetSelector = { readonly names: readonly string[] } | { readonly labels: Readonly<Record<string, string>> };

export interface DesiredSshUser {
  readonly username: string;
  /** Pins identity: adopt the item with this id, or rename it by id. */
  readonly id?: number;
  /** Defaults to `n1`, the only level the service documents. */
  readonly level: string;
  /** Needed to create; left out for an existing user, its password is left alone. */
  readonly password?: SecretValue;
  readonly passwordRef?: SecretRef;
  readonly ensure: Ensure;
  readonly source?: SourcePosition;
  /** Fleet: the targets this user is for; absent, the file's default (`DesiredState.targets`). */
  readonly targets?: TargetSelector;
}

/** A role the file names instead of giving its id (`roles: [auditor, 7]`). */
export interface RoleNameRef {
  readonly name: string;
  readonly source?: SourcePosition;
}

export interface DesiredApikey {
  readonly name: string;
  readonly id?: number;
  /** @default false */
  readonly superuser: boolean;
  /**
   * Role ids, sorted and unique. Exactly these roles, together with `roleNames` once they are
   * resolved. @default []
   */
  readonly roles: readonly number[];
  /**
   * Roles given by name, in file order. Resolved to ids through the service's roles listing
   * before planning (the planner sees ids only); absent when the file names none.
   */
  readonly roleNames?: readonly RoleNameRef[];
  readonly ensure: Ensure;
  readonly source?: SourcePosition;
  /** Fleet: the targets this key is for; absent, the file's default (`DesiredState.targets`). */
  readonly targets?: TargetSelector;
}

export interface PerKind<T> {
  readonly sshUsers: T;
  readonly apikeys: T;
}

export interface DesiredState {
  readonly sshUsers: readonly DesiredSshUser[];
  readonly apikeys: readonly DesiredApikey[];
  /** Delete remote items that are not declared. @default false for both kinds */
  readonly prune: PerKind<boolean>;
  /** Globs of keys (username / name) never changed or deleted. */
  readonly protect: PerKind<readonly string[]>;
  /** Fleet: the targets of items that name none (top-level `targets:`); absent, every target. */
  readonly targets?: TargetSelector;
}

export const emptyDesiredState: DesiredState = {
  sshUsers: [],
  apikeys: [],
  prune: { sshUsers: false, apikeys: false },
  protect: { sshUsers: [], apikeys: [] },
};
