/** 1-based line and column in a file the user wrote. */
export interface SourcePosition {
  readonly file: string;
  readonly line: number;
  readonly col: number;
}

export type Severity = 'error' | 'warning';

/** One finding about a file the user wrote: positioned, with the path inside the document. */
export interface Diagnostic {
  readonly severity: Severity;
  /** Stable code, e.g. `unknown_key`, `duplicate_identity`, `invalid_type`. */
  readonly code: string;
  readonly message: string;
  /** `sshUsers[1].level`; empty for the document itself. */
  readonly path: string;
  readonly position?: SourcePosition;
  /** For `policy_violation`: the rule broken, as named in `policy:` (`superuser`, `levels`). */
  readonly rule?: string;
}
