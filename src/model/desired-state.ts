import type { ApikeyKind, DesiredFieldsOf, SshUserKind } from './kinds/index.js';
import type { GeneratedPassword } from './generated-password.js';
import type { SecretRef } from './secret-value.js';
import type { SourcePosition } from './source-position.js';

export type Ensure = 'present' | 'absent';

/** `observe`: the item's drift is reported, never written, and it is never deleted (README, "The desired-state file"). */
export type ItemMode = 'observe';

/**
 * What an item may say about itself besides its fields (README, "The desired-state file").
 * Absent keys: none of it (a state built in code, or a file that does not use them).
 */
export interface ItemControls {
  /** Former names (username / name): a remote item carrying one is renamed in place, on its id. */
  readonly renamedFrom?: readonly string[];
  /** Fields never updated nor shown as drift (sent on create); the file's top-level `ignore:` for the kind is folded in. */
  readonly ignore?: readonly string[];
  readonly mode?: ItemMode;
  /** `expires:` as written (RFC 3339 with an offset): past it, the item is deleted and never re-created. */
  readonly expires?: string;
  /** `ttl:` as written (`72h`): counted from the item's create (the state file's record). */
  readonly ttl?: string;
}

/** An apikey's scheduled rotation (`rotate: {every: 90d, overlap: 24h}`), in ms and as written. */
export interface KeyRotation {
  readonly everyMs: number;
  readonly every: string;
  /** How long the predecessor stays valid after its successor was created; 0 when not written. */
  readonly overlapMs: number;
  readonly overlap?: string;
}

/**
 * Which targets of a fleet an item is for (`targets:` in the desired file, README, "Fleet: one access file, many services"): a
 * list of target names, or labels every selected target carries (ANDed). Only meaningful with
 * a targets file (`--targets`); absent: every target.
 */
export type TargetSelector = { readonly names: readonly string[] } | { readonly labels: Readonly<Record<string, string>> };

/**
 * A declared SSH user: the fields of kinds/ssh-user.ts (defaults filled in; the password,
 * needed to create, optional: left out for an existing user, its password is left alone).
 */
export interface DesiredSshUser extends DesiredFieldsOf<SshUserKind>, ItemControls {
  /** Pins identity: adopt the item with this id, or rename it by id. */
  readonly id?: number;
  readonly passwordRef?: SecretRef;
  /**
   * `--secrets optional`: the password is declared (`passwordRef`) but could not be read (an
   * unset or empty variable, an unreadable or empty file): the reference as written, `env NAME`
   * or `file PATH`. `password` is then absent; the plan is made without it and says so.
   */
  readonly passwordUnavailable?: string;
  /**
   * `password: {generate: …}`: amsync generates the password when it writes it (create,
   * rotation), sets it and writes it to the password sink; `password` is then absent.
   */
  readonly passwordGenerated?: GeneratedPassword;
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

/**
 * A declared apikey: the fields of kinds/apikey.ts, defaults filled in. `roles` are ids,
 * sorted and unique: exactly these roles, together with `roleNames` once they are resolved.
 */
export interface DesiredApikey extends DesiredFieldsOf<ApikeyKind>, ItemControls {
  readonly id?: number;
  /** `rotate: {every, overlap}`: a successor key once the token is this old; the old one kept for the overlap. */
  readonly rotate?: KeyRotation;
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
  /** The `policy:` section (README, "Teams and governance"); absent: no rules, nothing needs approval. */
  readonly policy?: AccessPolicy;
  /** Where the state was written: its files, and which one holds each section. */
  readonly origin?: DesiredOrigin;
  /** Fleet: the targets of items that name none (top-level `targets:`); absent, every target. */
  readonly targets?: TargetSelector;
}

/**
 * Where a desired state comes from. Several files (`-f` given more than once, or a folder)
 * each own the items they declare; `prune`, `protect` and `policy` are written in one file
 * each, and a change planned from them is shown as coming from that file.
 */
export interface DesiredOrigin {
  /** The files, as given (a folder's files joined to it), in load order. */
  readonly files: readonly string[];
  /** Where the `prune:` key is written, when it is. */
  readonly prune?: SourcePosition;
  readonly protect?: SourcePosition;
  readonly policy?: SourcePosition;
}

/** What `superuser: true` on an apikey needs under a policy. */
export type SuperuserRule = 'allow' | 'forbid' | 'approve';

/**
 * The `policy:` section: rules checked offline on the file (`validate`) and again on every
 * plan, and the changes that escalate privilege, which need an approval bound to their hash.
 */
export interface AccessPolicy {
  /** `forbid`: no declared apikey may be a superuser; `approve`: granting it needs approval. */
  readonly superuser: SuperuserRule;
  /** Role ids no declared apikey may hold (names are resolved into these, see roleNames). */
  readonly forbiddenRoles: readonly number[];
  readonly forbiddenRoleNames?: readonly RoleNameRef[];
  /** Role ids whose grant needs approval. */
  readonly approveRoles: readonly number[];
  readonly approveRoleNames?: readonly RoleNameRef[];
  /** Superuser apikeys the service may have once the plan is applied (declared and unmanaged). */
  readonly maxSuperuserKeys?: number;
  /** Every declared username must match this regular expression as a whole. */
  readonly usernamePattern?: string;
  readonly apikeyNamePattern?: string;
  /** The SSH levels a declared user may have. */
  readonly levels?: readonly string[];
  /** A plan with more deletes than this needs approval for each of them. */
  readonly approveDeletesOver?: number;
}

export const emptyDesiredState: DesiredState = {
  sshUsers: [],
  apikeys: [],
  prune: { sshUsers: false, apikeys: false },
  protect: { sshUsers: [], apikeys: [] },
};
