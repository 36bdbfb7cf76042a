import type { ActualState, Change, DesiredState, IgnoredFields, ItemRef, Kind, PasswordsUnavailable, Plan, PlanClock } from '../model/index.js';
import { apikeyKind, ignorableFieldsOf, sshUserKind } from '../model/index.js';
import { apikeySpec } from './apikey-spec.js';
import { endedRotations, retiringKeys, rotateKeys, rotationCycleNote, withRetiringNamed } from './key-rotation.js';
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
export function plan(desired: DesiredState, actual: ActualState, policy: PlanPolicy, fingerprints: PasswordFingerprints = noFingerprints, now?: PlanClock): Plan {
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
    now,
  );
  const keys = new PlanBuilder('apikey');
  // Apikeys in rotation: the planner sees the successor only (key-rotation.ts).
  const retiring = retiringKeys(actual.apikeys, now, desired.apikeys);
  const visibleKeys = retiring.size === 0 ? actual.apikeys : actual.apikeys.filter((k) => !retiring.has(k.id));
  planKind(
    apikeySpec,
    desired.apikeys,
    visibleKeys,
    policy.prune.apikeys,
    (key) => policy.isProtected('apikey', key),
    keys,
    policy.deleteDuplicateApikeys === true,
    policy.pruneSource,
    policy.observe === true,
    now,
  );

  const notes: string[] = [];
  if (users.uncomparedPasswords > 0) {
    notes.push('No state file: passwords are set when a user is created and are not compared afterwards; --rotate-passwords sets them all.');
  }
  if (users.untrackedPasswords > 0) {
    const n = users.untrackedPasswords;
    notes.push(`${n} existing SSH user${n === 1 ? '' : 's'} ${n === 1 ? 'has' : 'have'} a password amsync has not set yet, so drift cannot be detected; --rotate-passwords sets and tracks ${n === 1 ? 'it' : 'them'}.`);
  }

  notes.push(...generatedPasswordNotes(users));

  const unavailable = passwordsUnavailable(desired, users);
  if (unavailable) notes.push(unavailableNote(unavailable));
  notes.push(...users.notes, ...keys.notes, ...rotationCycleNote(now?.rotating));

  // Set only when a key declares `rotate:`: other plans are built as they always were.
  // A key a protect glob covers is never changed or deleted: not rotated, nor its predecessor deleted.
  const rotatable = () => desired.apikeys.filter((k) => !policy.isProtected('apikey', k.name));
  const rotated = desired.apikeys.some((k) => k.rotate !== undefined) || retiring.size > 0 ? rotateKeys({ changes: keys.changes, unchanged: keys.unchanged }, rotatable(), visibleKeys, retiring, now) : undefined;
  // What the rotation of a protected key would change (a successor, a predecessor's delete) is withheld: listed as protected, as a withheld update is.
  const held = rotated === undefined ? [] : withheldRotations(rotateKeys({ changes: [], unchanged: 0 }, desired.apikeys.filter((k) => policy.isProtected('apikey', k.name)), visibleKeys, retiring, now).changes, keys.protected);
  // A rotation whose successor is not kept (absent, pruned, undeclared, protected): its predecessor is shown with it.
  const ended = retiring.size === 0 ? undefined : endedRotations(retiring, { changes: rotated?.changes ?? keys.changes, observed: keys.observed, unmanaged: keys.unmanaged, protected: [...keys.protected, ...held] });
  const keyChanges = [...(rotated?.changes ?? keys.changes), ...(ended?.changes ?? [])];
  const expiries = [...users.expiries, ...keys.expiries].sort((a, b) => compareRefs({ ...a, id: a.id ?? 0 }, { ...b, id: b.id ?? 0 }));
  const observed = [...users.observed, ...keys.observed, ...(ended?.observed ?? [])].sort(compareChanges);
  const ignored = [...ignoredFields('sshUser', desired.sshUsers, ignorableFieldsOf(sshUserKind)), ...ignoredFields('apikey', desired.apikeys, ignorableFieldsOf(apikeyKind))];
  return {
    changes: [...users.changes, ...keyChanges].sort(compareChanges),
    unchanged: users.unchanged + (rotated?.unchanged ?? keys.unchanged),
    unmanaged: [...users.unmanaged, ...keys.unmanaged, ...(ended?.unmanaged ?? [])].sort(compareRefs),
    protected: [...users.protected, ...keys.protected, ...held, ...(ended?.protected ?? []).filter((r) => !held.some((h) => h.id === r.id))].sort(compareRefs),
    problems: [...users.problems, ...withRetiringNamed([...keys.problems, ...(rotated?.problems ?? []).filter((r) => !keys.problems.some((q) => q.key === r.key))], retiring)].sort(compareRefs),
    notes,
    ...(unavailable ? { passwordsUnavailable: unavailable } : {}),
    // Set only when used: a plan of a file without them is what it always was (saved-plan bytes).
    ...(observed.length > 0 ? { observed } : {}),
    ...(ignored.length > 0 ? { ignored } : {}),
    ...(expiries.length > 0 ? { expiries } : {}),
  };
}

/** The keys a protected key's rotation would create a successor of or delete (`rotateKeys` over the protected keys), once each, and not already listed. */
function withheldRotations(changes: readonly Change[], listed: readonly ItemRef[]): ItemRef[] {
  const out: ItemRef[] = [];
  for (const c of changes) {
    const id = c.action === 'create' ? c.replaces : c.id;
    if (typeof id !== 'number' || [...listed, ...out].some((r) => r.kind === 'apikey' && r.id === id)) continue;
    out.push({ kind: 'apikey', key: c.key, id });
  }
  return out;
}

/** Existing users whose generated password amsync keeps though it cannot vouch for it (names only). */
function generatedPasswordNotes(users: PlanBuilder<'sshUser'>): string[] {
  const names = (list: readonly string[]) => [...new Set(list)].sort(compareStrings).map((n) => JSON.stringify(n)).join(', ');
  const notes: string[] = [];
  if (users.ungeneratedPasswords.length > 0) {
    notes.push(`Generated password not set by amsync, kept as it is: SSH user ${names(users.ungeneratedPasswords)}; --replace sshUser:NAME generates and sets one.`);
  }
  if (users.unsunkPasswords.length > 0) {
    notes.push(`Generated password missing from the password sink (or changed there), kept as it is on the service: SSH user ${names(users.unsunkPasswords)}; --replace sshUser:NAME sets a new one.`);
  }
  return notes;
}

/** `--secrets optional`: what the plan was made without; undefined when every password was read. */
function passwordsUnavailable(desired: DesiredState, users: PlanBuilder<'sshUser'>): PasswordsUnavailable | undefined {
  const references = new Set<string>();
  for (const u of desired.sshUsers) if (u.ensure !== 'absent' && u.passwordUnavailable !== undefined) references.add(u.passwordUnavailable);
  if (references.size === 0) return undefined;
  const sorted = (list: Iterable<string>) => [...new Set(list)].sort(compareStrings);
  return { references: sorted(references), changes: sorted(users.unavailablePasswords), driftNotChecked: sorted(users.uncheckedPasswords) };
}

/**
 * A saved plan made without some passwords, as `amsync apply` reports it: apply has every
 * password (it refuses to run without them) and checked the drift the plan could not, so
 * neither the note nor the "not available" marks hold for that run.
 */
export function withPasswordsAvailable(plan: Plan): Plan {
  const unavailable = plan.passwordsUnavailable;
  if (!unavailable) return plan;
  const { passwordsUnavailable: _dropped, ...rest } = plan;
  const note = unavailableNote(unavailable);
  return { ...rest, notes: plan.notes.filter((n) => n !== note) };
}

/** References named in the note; the JSON document and a saved plan have them all. */
const notedReferences = 20;

/** The one note of a plan made without some passwords: the references (never values) and what that leaves out. */
function unavailableNote(u: PasswordsUnavailable): string {
  const shown = u.references.slice(0, notedReferences).join(', ');
  const more = u.references.length > notedReferences ? ` and ${u.references.length - notedReferences} more` : '';
  const n = u.driftNotChecked.length;
  const drift = n === 0 ? '' : ` Password drift not checked for ${n} existing SSH user${n === 1 ? '' : 's'}.`;
  const sends = u.changes.length === 0 ? '' : ' A change marked "not available to this run" sends the password when it is applied with the secret.';
  return `Password secrets not available to this run (--secrets optional): ${shown}${more}.${drift}${sends}`;
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

/** The order of a plan's changes (targeted-plan.ts sorts the changes it adds the same way). */
export function compareChanges(a: Change, b: Change): number {
  return kindOrder[a.kind] - kindOrder[b.kind] || compareStrings(a.key, b.key) || actionOrder[a.action] - actionOrder[b.action] || (a.id ?? 0) - (b.id ?? 0);
}

function compareRefs(a: { kind: Change['kind']; key: string; id?: number }, b: { kind: Change['kind']; key: string; id?: number }): number {
  return kindOrder[a.kind] - kindOrder[b.kind] || compareStrings(a.key, b.key) || (a.id ?? 0) - (b.id ?? 0);
}

