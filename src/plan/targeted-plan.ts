import type { ActualState, Change, DesiredState, Plan, PlanClock } from '../model/index.js';
import { declaredItems } from './declared-items.js';
import { isPartial, replaceWord } from './item-selection.js';
import { retiringKeys } from './key-rotation.js';
import { compareChanges, plan as planAll } from './plan.js';
import type { PasswordFingerprints, PlanPolicy } from './policy.js';
import { noFingerprints } from './policy.js';
import { replaceItems } from './replace-items.js';
import { selectItems } from './select-items.js';

/**
 * The plan of a run: the diff engine's plan of the whole file, then `--replace`, then
 * `--only` / `--exclude` (policy.selection). Without a selection it is the diff engine's plan
 * itself, the same object. Pure, like the rest of plan/; throws UsageError (exit 64) for an
 * address that names nothing it may.
 */
export function plan(desired: DesiredState, actual: ActualState, policy: PlanPolicy, fingerprints: PasswordFingerprints = noFingerprints, now?: PlanClock): Plan {
  const full = planAll(desired, actual, policy, fingerprints, now);
  const selection = policy.selection;
  if (selection === undefined || (selection.replace.length === 0 && !isPartial(selection))) return full;
  // Matched as the planner matches: a rotating key's predecessor is not a second key of its name
  // (`amsync rotate` during an overlap rotates the successor; it found no key and did nothing).
  const retiring = retiringKeys(actual.apikeys, now, desired.apikeys);
  const declared = declaredItems(desired, retiring.size === 0 ? actual : { ...actual, apikeys: actual.apikeys.filter((k) => !retiring.has(k.id)) });
  const replaced = selection.replace.length === 0 ? { plan: full, items: [] } : replaceItems(full, declared, actual, selection.replace, policy, replaceWord(selection));
  const sorted: Plan = replaced.plan === full ? full : { ...replaced.plan, changes: [...replaced.plan.changes].sort((a: Change, b: Change) => compareChanges(a, b)) };
  return isPartial(selection) ? selectItems(sorted, declared, actual, selection, replaced.items) : sorted;
}
