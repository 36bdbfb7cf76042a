import type { ChangeResult, Plan } from '../model/index.js';

/** What the renderers print: a plan, and the results when it was applied. */
export interface Report {
  readonly plan: Plan;
  readonly dryRun: boolean;
  /** Present only when something was applied. */
  readonly results?: readonly ChangeResult[];
  /** The desired-state file, for headings. */
  readonly file?: string;
}
