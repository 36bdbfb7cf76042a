import type { SourcePosition } from './source-position.js';

export type Kind = 'sshUser' | 'apikey';
export type Action = 'create' | 'update' | 'delete';

/** Shown in place of every secret value in plans, logs and reports. */
export const SENSITIVE = '(sensitive)';

export interface FieldChange {
  readonly before: unknown;
  readonly after: unknown;
}

export interface Change {
  readonly kind: Kind;
  readonly action: Action;
  /** username or apikey name (the desired one for a rename). */
  readonly key: string;
  /** Remote id; null for a create. */
  readonly id: number | null;
  /** Field-level before/after; secrets appear as SENSITIVE. */
  readonly fields: Readonly<Record<string, FieldChange>>;
  /** Why, in a few words, when it is not obvious: "rename by id", "password changed". */
  readonly reason?: string;
  /**
   * Where the file asks for it: the item's declaration, or the `prune:` key for a delete of an
   * undeclared item (absent under `--prune`). Shown when the state comes from several files.
   */
  readonly source?: SourcePosition;
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
}

export interface PlanSummary {
  readonly create: number;
  readonly update: number;
  readonly delete: number;
  readonly unchanged: number;
  readonly unmanaged: number;
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
}
