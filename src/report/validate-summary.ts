import type { Diagnostic } from '../model/index.js';

export interface ValidateCounts {
  readonly sshUsers: number;
  readonly apikeys: number;
  /** Items with `ensure: absent`, of both kinds. */
  readonly absent: number;
}

/** What `amsync validate --json` prints. */
export interface ValidateReport {
  readonly valid: boolean;
  /** The -f paths, joined. */
  readonly file: string;
  /** Every file read, when there are several (a folder, or -f given more than once). */
  readonly files?: readonly string[];
  readonly counts: ValidateCounts | null;
  readonly warnings: readonly Diagnostic[];
  readonly errors: readonly Diagnostic[];
  /** With --targets: the targets file, and the items each target gets. */
  readonly fleet?: { readonly file: string; readonly targets: readonly ({ readonly name: string } & ValidateCounts)[] };
}

/** "access.yaml: valid — 4 SSH users, 3 apikeys (1 absent), 1 warning". */
export function validateSummaryLine(report: ValidateReport): string {
  const c = report.counts ?? { sshUsers: 0, apikeys: 0, absent: 0 };
  const absent = c.absent > 0 ? ` (${c.absent} absent)` : '';
  const warnings = report.warnings.length === 0 ? 'no warnings' : plural(report.warnings.length, 'warning');
  const files = report.files ? ` (${plural(report.files.length, 'file')})` : '';
  const fleet = report.fleet === undefined ? '' : `; ${report.fleet.file}: ${plural(report.fleet.targets.length, 'target')}`;
  return `${report.file}${files}: valid — ${plural(c.sshUsers, 'SSH user')}, ${plural(c.apikeys, 'apikey')}${absent}, ${warnings}${fleet}`;
}

/** "1 error", "3 errors". */
export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
