import { UsageError } from '../errors.js';
import type { ActualState, Change, ChangeOf, DesiredApikey, DesiredSshUser, Plan } from '../model/index.js';
import { apikeyKind, GENERATED, SENSITIVE } from '../model/index.js';
import type { DeclaredItem } from './declared-items.js';
import { createFieldChanges, deleteFieldChanges } from './field-changes.js';
import { addressMatches, type ItemAddress } from './item-selection.js';
import { keyRotationReason, rotatedReason } from './key-rotation.js';
import type { PlanPolicy } from './policy.js';

/** A plan with some items replaced, and which declared items the addresses named. */
export interface Replaced {
  readonly plan: Plan;
  readonly items: readonly DeclaredItem[];
}

/**
 * `--replace ADDR`: issue a declared item's secret again. An SSH user is sent its declared
 * password (an update, as `--rotate-passwords` does for all), or a new one when amsync
 * generates it (`password: {generate}`: a rotation now); an apikey gets a successor: a
 * create with the declared fields (`replaces`: the old id), then the delete of the old key
 * (`replaced`), which the apply runs only after the create applied and its token was written.
 * A key that declares `rotate: {every, overlap}` is rotated now (`amsync rotate`): the create's
 * reason is a rotation's, and with an overlap the old key stays until it has passed.
 * Apikey names are not unique on the service (api-spec: only usernames are), so the successor
 * carries the declared name from the start: no temporary name, no rename that could be refused.
 *
 * An address that names no declared item, or one that is `ensure: absent`, protected, pinned
 * (an apikey: its successor gets a new id) or without a password to send, is a usage error
 * (exit 64): the flag asks for something this file cannot give.
 */
export function replaceItems(plan: Plan, declared: readonly DeclaredItem[], actual: ActualState, addresses: readonly ItemAddress[], policy: Pick<PlanPolicy, 'isProtected'>, by = '--replace'): Replaced {
  const items = namedItems(declared, addresses, by);
  let changes: Change[] = [...plan.changes];
  let unchanged = plan.unchanged;
  const has = (pred: (c: Change) => boolean) => changes.some(pred);
  const problem = (d: DeclaredItem) => plan.problems.some((p) => p.kind === d.kind && p.key === d.key);
  for (const d of items) {
    // A create sends the password and issues a token anyway; a problem is shown as it is.
    if (problem(d) || has((c) => c.kind === d.kind && c.action === 'create' && c.key === d.key)) continue;
    if (d.remoteId === undefined) continue;
    const remoteKey = d.kind === 'sshUser' ? actual.sshUsers.find((u) => u.id === d.remoteId)?.username : actual.apikeys.find((k) => k.id === d.remoteId)?.name;
    if (remoteKey === undefined) continue;
    if (policy.isProtected(d.kind, remoteKey) || policy.isProtected(d.kind, d.key)) throw new UsageError(`${by}: ${d.kind} "${d.key}" is protected (a protect glob covers it): it is never changed`, 'replace_protected');
    const update = changes.findIndex((c) => c.kind === d.kind && c.action === 'update' && c.id === d.remoteId);
    if (update < 0) unchanged -= 1;
    if (d.kind === 'sshUser') {
      const user = d.item as DesiredSshUser;
      const before = update < 0 ? undefined : (changes[update] as ChangeOf<'sshUser'>);
      const passwordSent: ChangeOf<'sshUser'> = {
        kind: 'sshUser',
        action: 'update',
        key: user.username,
        id: d.remoteId,
        // A generated password (password: {generate}) is generated anew: `--replace` rotates it now.
        fields: { ...before?.fields, password: { before: SENSITIVE, after: user.passwordGenerated ? GENERATED : SENSITIVE } },
        reason: before?.reason !== undefined && before.fields.password === undefined ? `${before.reason}; replace requested` : (before?.reason ?? 'replace requested'),
        ...(user.source === undefined ? {} : { source: user.source }),
      };
      if (update < 0) changes.push(passwordSent);
      else changes[update] = passwordSent;
      continue;
    }
    const key = d.item as DesiredApikey;
    const old = actual.apikeys.find((k) => k.id === d.remoteId)!;
    // The successor carries every declared field: an update planned for the old key is moot.
    if (update >= 0) changes = changes.filter((_, i) => i !== update);
    const source = key.source === undefined ? {} : { source: key.source };
    // A key that declares `rotate:` is rotated now: a rotation (credential_rotated), its predecessor kept for the overlap.
    const rotation = key.rotate !== undefined;
    changes.push({ kind: 'apikey', action: 'create', key: key.name, id: null, fields: createFieldChanges(apikeyKind, key), reason: rotation ? `${keyRotationReason} requested now; replaces id ${old.id}` : `replaces id ${old.id}`, replaces: old.id, ...source });
    if (rotation && key.rotate!.overlapMs > 0) continue;
    changes.push({ kind: 'apikey', action: 'delete', key: old.name, id: old.id, fields: deleteFieldChanges(apikeyKind, old), reason: `${rotation ? rotatedReason : 'replaced'}: deleted once its successor exists and its token is written`, replaced: true, ...source });
  }
  return { plan: { ...plan, changes, unchanged }, items };
}

/** The declared items the addresses name; each address must name at least one it may replace. `by`: `--replace` or `rotate`, as the user typed it. */
function namedItems(declared: readonly DeclaredItem[], addresses: readonly ItemAddress[], by: string): DeclaredItem[] {
  const verb = by === 'rotate' ? 'rotated' : 'replaced';
  const out = new Set<DeclaredItem>();
  for (const address of addresses) {
    const named = declared.filter((d) => addressMatches(address, d.kind, [d.key], d.remoteId));
    if (named.length === 0) throw new UsageError(`${by} ${address.text} names no item the file declares: only a declared item can be ${verb}`, 'replace_undeclared');
    for (const d of named) {
      const at = d.item.source ? ` (${d.item.source.file}:${d.item.source.line}:${d.item.source.col})` : '';
      if (d.item.ensure === 'absent') throw new UsageError(`${by} ${address.text}: ${d.kind} "${d.key}"${at} is declared \`ensure: absent\`: there is nothing to ${by === 'rotate' ? 'rotate' : 'replace'}`, 'replace_absent');
      if (d.kind === 'sshUser' && !(d.item as DesiredSshUser).password && !(d.item as DesiredSshUser).passwordGenerated) {
        throw new UsageError(`${by} ${address.text}: SSH user "${d.key}"${at} declares no password to send again; add \`password:\``, 'replace_no_password');
      }
      if (d.kind === 'apikey' && d.item.id !== undefined) {
        throw new UsageError(`${by} ${address.text}: apikey "${d.key}"${at} pins \`id: ${d.item.id}\`, and its successor gets a new id; remove the pin to ${by === 'rotate' ? 'rotate' : 'replace'} it`, 'replace_pinned');
      }
      out.add(d);
    }
  }
  return [...out];
}
