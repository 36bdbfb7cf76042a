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

/**
 * `access.yaml:3:7: error: unknown key 'levl' — did you mean 'level'? (sshUsers[1].levl)`: the
 * one text of a finding, on the CLI's stderr and in the daemon's logs.
 */
export function formatDiagnostic(d: Diagnostic): string {
  const where = d.position ? `${d.position.file}:${d.position.line}:${d.position.col}: ` : '';
  const path = d.path ? ` (${d.path})` : '';
  return `${where}${d.severity}: ${d.message}${path}`;
}
