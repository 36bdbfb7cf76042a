import type { ActualState, Change, DesiredState, IgnoredFields, Kind, Plan } from '../model/index.js';
import { apikeyKind, ignorableFieldsOf, sshUserKind } from '../model/index.js';
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
    policy.observe === true,
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
    policy.observe === true,
  );

  const notes: string[] = [];
  if (users.uncomparedPasswords > 0) {
    notes.push('No state file: passwords are set when a user is created and are not compared afterwards; --rotate-passwords sets them all.');
  }
  if (users.untrackedPasswords > 0) {
    const n = users.untrackedPasswords;
    notes.push(`${n} existing SSH user${n === 1 ? '' : 's'} ${n === 1 ? 'has' : 'have'} a password amsync has not set yet, so drift cannot be detected; --rotate-passwords sets and tracks ${n === 1 ? 'it' : 'them'}.`);
  }

  const observed = [...users.observed, ...keys.observed].sort(compareChanges);
  const ignored = [...ignoredFields('sshUser', desired.sshUsers, ignorableFieldsOf(sshUserKind)), ...ignoredFields('apikey', desired.apikeys, ignorableFieldsOf(apikeyKind))];
  return {
    changes: [...users.changes, ...keys.changes].sort(compareChanges),
    unchanged: users.unchanged + keys.unchanged,
    unmanaged: [...users.unmanaged, ...keys.unmanaged].sort(compareRefs),
    protected: [...users.protected, ...keys.protected].sort(compareRefs),
    problems: [...users.problems, ...keys.problems].sort(compareRefs),
    notes,
    // Set only when used: a plan of a file without them is what it always was (saved-plan bytes).
    ...(observed.length > 0 ? { observed } : {}),
    ...(ignored.length > 0 ? { ignored } : {}),
  };
}

/**
 * The fields the declared items of a kind ignore, for the plan's header: `all` when every item
 * to keep ignores it (a top-level `ignore:`, or each item's), else the keys that do, sorted.
 */
function ignoredFields(kind: Kind, items: readonly { readonly ensure: string; readonly ignore?: readonly string[]; readonly username?: string; readonly name?: string }[], fields: readonly string[]): IgnoredFields[] {
  const present = items.filter((i) => i.ensure === 'present');
  if (!present.some((i) => i.ignore !== undefined)) return [];
  const out: IgnoredFields[] = [];
  for (const field of fields) {
    const keys = present.filter((i) => i.ignore?.includes(field) === true).map((i) => (i.username ?? i.name)!);
    if (keys.length === 0) continue;
    out.push({ kind, field, keys: keys.length === present.length ? 'all' : [...new Set(keys)].sort(compareStrings) });
  }
  return out;
}

function compareChanges(a: Change, b: Change): number {
  return kindOrder[a.kind] - kindOrder[b.kind] || compareStrings(a.key, b.key) || actionOrder[a.action] - actionOrder[b.action] || (a.id ?? 0) - (b.id ?? 0);
}

function compareRefs(a: { kind: Change['kind']; key: string; id?: number }, b: { kind: Change['kind']; key: string; id?: number }): number {
  return kindOrder[a.kind] - kindOrder[b.kind] || compareStrings(a.key, b.key) || (a.id ?? 0) - (b.id ?? 0);
}

