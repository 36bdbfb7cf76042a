import type { ApprovalStatus, ChangeResult, Plan } from '../model/index.js';

/** What the renderers print: a plan, and the results when it was applied. */
export interface Report {
  readonly plan: Plan;
  readonly dryRun: boolean;
  /** Present only when something was applied. */
  readonly results?: readonly ChangeResult[];
  /** The desired-state file, for headings. */
  readonly file?: string;
  /** The command, for headings. @default `plan` for a dry-run, else `sync` */
  readonly command?: 'plan' | 'sync' | 'apply';
  /** The saved plan this report was saved to (`--out`) or applied from (`amsync apply`). */
  readonly planFile?: string;
  /** Role names by id, when known (the file names roles): shown as `roles = [3 auditor, 7 billing]`. */
  readonly roleNames?: ReadonlyMap<number, string>;
  /**
   * The state came from several files: each change shows the file (and position) that asks
   * for it, so a pull request shows which team's file caused it.
   */
  readonly sources?: boolean;
  /** What the policy said: changes that need approval (with hashes), approved or withheld. */
  readonly approval?: ApprovalStatus;
}

/** `teams/ops.yaml:12:5`. */
export function positionText(p: { file: string; line: number; col: number }): string {
  return `${p.file}:${p.line}:${p.col}`;
}
