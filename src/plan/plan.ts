import type { ActualState, Change, DesiredState, Plan } from '../model/index.js';
import { apikeySpec } from './apikey-spec.js';
import { PlanBuilder } from './plan-builder.js';
import { planKind } from './plan-kind.js';
import type { PasswordFingerprints, PlanPolicy } from './policy.js';
import { noFingerprints } from './policy.js';
import { sshUserSpec } from './ssh-user-spec.js';
import { compareStrings } from '../text/index.js';

const kindOrder = { sshUser: 0, apikey: 1 } as const;
const actionOrder = { create: 0, update: 1, delete: 2 } as const;

/**
 * The diff engine: a pure function of the desired state, the complete actual state and the
 * policy. Same inputs, same plan, in a deterministic order (kind, then key).
 */
export function plan(desired: DesiredState, actual: ActualState, policy: PlanPolicy, fingerprints: PasswordFingerprints = noFingerprints): Plan {
  const users = new PlanBuilder('sshUser');
  planKind(
    sshUserSpec(policy.passwords, fingerprints, users),
    desired.sshUsers,
    actual.sshUsers,
    policy.prune.sshUsers,
    (key) => policy.isProtected('sshUser', key),
    users,
    false,
    policy.pruneSource,
  );
  const keys = new PlanBuilder('apikey');
  planKind(
    apikeySpec,
    desired.apikeys,
    actual.apikeys,
    policy.prune.apikeys,
    (key) => policy.isProtected('apikey', key),
    keys,
    policy.deleteDuplicateApikeys === true,
    policy.pruneSource,
  );

  const notes: string[] = [];
  if (users.uncomparedPasswords > 0) {
    notes.push('No state file: passwords are set when a user is created and are not compared afterwards; --rotate-passwords sets them all.');
  }
  if (users.untrackedPasswords > 0) {
    const n = users.untrackedPasswords;
    notes.push(`${n} existing SSH user${n === 1 ? '' : 's'} ${n === 1 ? 'has' : 'have'} a password amsync has not set yet, so drift cannot be detected; --rotate-passwords sets and tracks ${n === 1 ? 'it' : 'them'}.`);
  }

  return {
    changes: [...users.changes, ...keys.changes].sort(compareChanges),
    unchanged: users.unchanged + keys.unchanged,
    unmanaged: [...users.unmanaged, ...keys.unmanaged].sort(compareRefs),
    protected: [...users.protected, ...keys.protected].sort(compareRefs),
    problems: [...users.problems, ...keys.problems].sort(compareRefs),
    notes,
  };
}

/** The order of a plan's changes (targeted-plan.ts sorts the changes it adds the same way). */
export function compareChanges(a: Change, b: Change): number {
  return kindOrder[a.kind] - kindOrder[b.kind] || compareStrings(a.key, b.key) || actionOrder[a.action] - actionOrder[b.action] || (a.id ?? 0) - (b.id ?? 0);
}

function compareRefs(a: { kind: Change['kind']; key: string; id?: number }, b: { kind: Change['kind']; key: string; id?: number }): number {
  return kindOrder[a.kind] - kindOrder[b.kind] || compareStrings(a.key, b.key) || (a.id ?? 0) - (b.id ?? 0);
}

