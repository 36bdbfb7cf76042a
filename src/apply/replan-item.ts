import type { ActualState, Change, DesiredApikey, DesiredSshUser, DesiredState, Kind, PlanProblem } from '../model/index.js';
import type { PasswordFingerprints, PasswordPolicy, PlanPolicy } from '../plan/index.js';
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
  fingerprints: PasswordFingerprints,
): { change?: Change; problem?: PlanProblem; protected?: boolean } {
  const one: DesiredState = {
    ...desired,
    sshUsers: kind === 'sshUser' ? [item as DesiredSshUser] : [],
    apikeys: kind === 'apikey' ? [item as DesiredApikey] : [],
    prune: { sshUsers: false, apikeys: false },
  };
  const p = plan(one, fresh, { ...policy, prune: { sshUsers: false, apikeys: false }, passwords }, fingerprints);
  const problem = p.problems[0];
  if (problem) return { problem };
  // The item found is covered by a protect glob: it is not ours to change.
  if (p.protected.some((x) => x.kind === kind)) return { protected: true };
  return { change: p.changes.find((c) => c.kind === kind) };
}
