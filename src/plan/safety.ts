import type { DesiredState, Plan } from '../model/index.js';
import { SafetyError } from '../errors.js';
import type { PlanPolicy } from './policy.js';

export interface SafetyOptions {
  /** A plan with more deletes than this is refused. @default 10 */
  readonly maxDeletes: number;
  /** Let prune delete every remote item of a kind when the file declares none of it. */
  readonly allowEmptyPrune: boolean;
}

/**
 * The guards that run before anything is applied. They return the refusal rather than throw
 * so a dry-run can still show the plan it refuses.
 */
export function checkSafety(plan: Plan, desired: DesiredState, policy: PlanPolicy, options: SafetyOptions): SafetyError | undefined {
  if (!options.allowEmptyPrune) {
    const empty: string[] = [];
    // `ensure: absent` items declare nothing to keep: a file of only those is empty for this.
    const present = (items: readonly { ensure: string }[]) => items.some((i) => i.ensure === 'present');
    if (policy.prune.sshUsers && !present(desired.sshUsers) && plan.changes.some((c) => c.kind === 'sshUser' && c.action === 'delete')) empty.push('sshUsers');
    if (policy.prune.apikeys && !present(desired.apikeys) && plan.changes.some((c) => c.kind === 'apikey' && c.action === 'delete')) empty.push('apikeys');
    if (empty.length > 0) {
      return new SafetyError(
        'empty_prune',
        `refusing to prune ${empty.join(' and ')}: the file declares none, so every remote item would be deleted (a truncated or emptied file must not wipe the service); pass --allow-empty-prune if that is what you want`,
      );
    }
  }
  const deletes = plan.changes.filter((c) => c.action === 'delete').length;
  if (deletes > options.maxDeletes) {
    return new SafetyError(
      'deletion_budget',
      `refusing to delete ${deletes} items: the deletion budget is ${options.maxDeletes}; raise it with --max-deletes ${deletes} (or maxDeletes in the settings) after checking the plan`,
    );
  }
  return undefined;
}
