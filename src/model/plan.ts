import type { FieldChange, FieldChangesOf, KindOf, kinds } from './kinds/index.js';
import type { SourcePosition } from './source-position.js';
import type { PlannedExpiry } from './expiry.js';

export type Kind = keyof typeof kinds;
export type Action = 'create' | 'update' | 'delete';

/** Shown in place of every secret value in plans, logs and reports. */
export const SENSITIVE = '(sensitive)';

/**
 * Shown instead of SENSITIVE for a password this run could not read (`--secrets optional`):
 * the change sends it when it is applied with the secret. Renderers only: a change's fields
 * keep SENSITIVE, so saved plans and hashes do not depend on where the plan was made.
 */
export const SENSITIVE_UNAVAILABLE = '(sensitive, not available to this run)';

/**
 * Shown, and carried in a change's fields (a saved plan too), instead of SENSITIVE for a
 * password amsync generates (`password: {generate: …}`): the value does not exist until the
 * change is written, is generated then, set, and written to the password sink only.
 */
export const GENERATED = '(generated)';

export type { FieldChange } from './kinds/index.js';

/**
 * One planned write of a kind. `fields` is typed by the kind's declaration (kinds/): a field
 * added there is a field every change of that kind may carry, and the compiler finds the code
 * that builds or reads them.
 */
export type ChangeOf<N extends Kind> = ChangeCommon & {
  readonly kind: N;
  /** Field-level before/after; secrets appear as SENSITIVE. */
  readonly fields: FieldChangesOf<KindOf<N>>;
};

/** A change of either kind; narrow on `kind` to read its fields. */
export type Change = { readonly [N in Kind]: ChangeOf<N> }[Kind];

/**
 * A change's fields as name and before/after, in the change's order: for what treats every
 * field alike (renderers, hashes). Code that means one field narrows on `kind` instead.
 */
export function fieldEntries(change: Change): (readonly [string, FieldChange])[] {
  return Object.entries(change.fields as Readonly<Record<string, FieldChange>>);
}

interface ChangeCommon {
  readonly action: Action;
  /** username or apikey name (the desired one for a rename). */
  readonly key: string;
  /** Remote id; null for a create. */
  readonly id: number | null;
  /** Why, in a few words, when it is not obvious: "rename by id", "password changed". */
  readonly reason?: string;
  /** An update that renames the item in place (`renamedFrom:`): its name before (`key` is the new one). */
  readonly renamedFrom?: string;
  /**
   * Where the file asks for it: the item's declaration, or the `prune:` key for a delete of an
   * undeclared item (absent under `--prune`). Shown when the state comes from several files.
   */
  readonly source?: SourcePosition;
  /**
   * `--replace` of an apikey: on the successor's create, the id of the key it replaces. That
   * key's delete (marked `replaced`) runs only once this create applied and its token was
   * written to the token sink.
   */
  readonly replaces?: number;
  /** `--replace` of an apikey: on the delete of the key a successor replaces. */
  readonly replaced?: true;
}

export interface ItemRef {
  readonly kind: Kind;
  readonly key: string;
  readonly id: number;
}

/** A declared item the planner cannot decide on (e.g. two remote apikeys share its name). */
export interface PlanProblem {
  readonly kind: Kind;
  readonly key: string;
  readonly code: 'ambiguous' | 'missing_password' | 'id_not_found' | 'identity_conflict';
  readonly message: string;
  readonly source?: SourcePosition;
}

export interface Plan {
  /** Sorted by kind, then action order (create, update, delete), then key. */
  readonly changes: readonly Change[];
  readonly unchanged: number;
  /** Remote items not declared and not pruned. */
  readonly unmanaged: readonly ItemRef[];
  /** Remote items a protect glob kept from a change or delete. */
  readonly protected: readonly ItemRef[];
  readonly problems: readonly PlanProblem[];
  /** Plain-language notes for the reader ("passwords are set on create only: no state file"). */
  readonly notes: readonly string[];
  /**
   * `--secrets optional`, when some declared password could not be read: what the plan could
   * not know. Absent otherwise (every password was available).
   */
  readonly passwordsUnavailable?: PasswordsUnavailable;
  /**
   * `--only` / `--exclude`: the plan is partial. Only changes of selected items are in it; the
   * counts say how many declared and remote items it left out (neither changed nor listed).
   */
  readonly selection?: PlanSelection;
  /**
   * Drift of observed items (`mode: observe`, or a target observed as a whole): what a sync
   * would change, reported and never written — deletes included. Absent when there is none.
   */
  readonly observed?: readonly Change[];
  /** Fields declared `ignore:` (never updated, never drift), for the plan's header. Absent when none. */
  readonly ignored?: readonly IgnoredFields[];
  /**
   * Declared items with an expiry not reached yet (`expires:` / `ttl:`), sorted like changes.
   * An expired one is a delete with the reason `expired` instead. Absent when there is none.
   */
  readonly expiries?: readonly PlannedExpiry[];
}

/**
 * The declared passwords a plan was made without (`plan --secrets optional`): the references
 * that could not be read, the changes that send such a password (a create, a rotation: they
 * send it when applied with the secret), and the existing users whose password drift was not
 * checked. Names and references only, never a value.
 */
export interface PasswordsUnavailable {
  /** Where the passwords come from, as written (`env NAME`, `file PATH`): each once, sorted. */
  readonly references: readonly string[];
  /** SSH users whose planned change sends a password this run does not have, sorted. */
  readonly changes: readonly string[];
  /** Existing SSH users whose password was not compared with the one amsync last set, sorted. */
  readonly driftNotChecked: readonly string[];
}

/** What a partial plan was limited to, as given on the command line, and what it left out. */
export interface PlanSelection {
  readonly only: readonly string[];
  readonly exclude: readonly string[];
  readonly omitted: { readonly declared: number; readonly remote: number };
}

/** One field some items of a kind ignore: every declared item of the kind (`all`), or these. */
export interface IgnoredFields {
  readonly kind: Kind;
  readonly field: string;
  readonly keys: 'all' | readonly string[];
}

export interface PlanSummary {
  readonly create: number;
  readonly update: number;
  readonly delete: number;
  readonly unchanged: number;
  readonly unmanaged: number;
  /** Of the deletes, those of expired items (reason `expired`); present only when there are some. */
  readonly expired?: number;
}

export type ResultStatus = 'applied' | 'failed' | 'skipped';

export interface ChangeResult {
  readonly kind: Kind;
  readonly key: string;
  readonly action: Action;
  readonly status: ResultStatus;
  /** Redacted, one line. */
  readonly error?: string;
  /** Set when the item drifted during apply and was re-planned ("adopted existing user id 7"). */
  readonly drift?: string;
  readonly id?: number | null;
  /** The approval hash of a change that needed one and was approved (the audit trail). */
  readonly approval?: string;
  /**
   * Skipped because the run was stopped (an interrupt, a lost lock or lease) before any of its
   * writes was sent: the service never received it. Reports count these rather than list them.
   */
  readonly notStarted?: true;
  /** `--replace` of an apikey: on the successor's create, the id of the key it replaces. */
  readonly replaces?: number;
  /** `--replace` of an apikey: on the old key's delete, the id of its successor. */
  readonly replacedBy?: number;
  /** On a successor's create: its token was not written to the token sink (nobody has it). */
  readonly tokenLost?: true;
}
