import type { ActualState, Change, DesiredApikey, DesiredSshUser, DesiredState, Kind, PlanProblem } from '../model/index.js';
import type { PasswordPolicy, PlanPolicy } from '../plan/index.js';
import { plan } from '../plan/index.js';

/**
 * Re-plans one declared item against a fresh listing, with the same pure planner as the
 * whole plan, so drift handling can never decide differently from a fresh sync.
 */
export function replanItem(
  kind: Kind,
  item: DesiredSshUser | DesiredApikey,
  desired: DesiredState,
  fresh: ActualState,
  policy: PlanPolicy,
  passwords: PasswordPolicy,
): { change?: Change; problem?: PlanProblem } {
  const one: DesiredState = {
    ...desired,
    sshUsers: kind === 'sshUser' ? [item as DesiredSshUser] : [],
    apikeys: kind === 'apikey' ? [item as DesiredApikey] : [],
    prune: { sshUsers: false, apikeys: false },
  };
  const p = plan(one, fresh, { ...policy, prune: { sshUsers: false, apikeys: false }, passwords });
  const problem = p.problems[0];
  if (problem) return { problem };
  return { change: p.changes.find((c) => c.kind === kind) };
}
