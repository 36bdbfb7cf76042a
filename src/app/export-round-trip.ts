import { AmsyncError } from '../errors.js';
import type { DesiredApikey, DesiredSshUser, DesiredState, NamedRole } from '../model/index.js';
import { apikeyKind, sshUserKind } from '../model/index.js';
import { parseDesired, resolveRoleNames, sameDeclaredItem, type DesiredPiece } from '../desired/index.js';

/**
 * Import-verify, built in: the text must parse as a valid desired-state file and plan zero
 * changes against the listing it came from. Anything else is a bug in amsync, and nothing
 * is written rather than a file that would change the service.
 *
 * Checked piece by piece, without the text (28 MB at 1M items) or a second parsed state in
 * memory: each piece of items, as a document of its own, must parse to exactly the items it
 * was written from; what lies around the lists (header, `prune`, `protect`) must parse to the
 * state's; no identity may be declared twice across pieces (as the file's own check would
 * find); and the state written must plan zero changes. Together these are the whole file's
 * round trip. Returns the text's size in bytes.
 */
export function verifyRoundTrip(
  header: string,
  pieces: Iterable<DesiredPiece>,
  written: DesiredState,
  planAgainstListing: (desired: DesiredState) => { readonly changes: readonly unknown[]; readonly problems: readonly unknown[] },
  roles: readonly NamedRole[] | null,
): number {
  const invalid = (detail: string): AmsyncError =>
    new AmsyncError('export_invalid', `the export does not validate (${detail}); nothing was written. This is a bug in amsync: please report it`);
  const parse = (text: string): DesiredState => {
    // amsync's own output is checked whatever its size: the 10 MB limit is for files people give it.
    const parsed = parseDesired(text, { file: 'export', env: {}, readSecretFile: () => new Error('an export references no secret file'), maxBytes: Number.POSITIVE_INFINITY });
    const resolved = parsed.value === undefined ? undefined : resolveRoleNames(parsed.value, roles);
    if (!parsed.value || !resolved?.ok) {
      const first = parsed.errors[0] ?? (resolved?.ok === false ? resolved.diagnostics[0] : undefined);
      throw invalid(first ? `${first.message} at ${first.path}` : 'unknown error');
    }
    return resolved.desired;
  };
  let bytes = Buffer.byteLength(header);
  // Everything but the items: the header, each list's key written as an empty list, the tail.
  let frame = header;
  const identities = new IdentityCheck();
  for (const piece of pieces) {
    bytes += Buffer.byteLength(piece.text);
    if (piece.kind === 'text') frame += piece.text;
    else if (piece.kind === 'key') frame += `${piece.list}: []\n`;
    else {
      const read = parse(`${piece.list}:\n${piece.text}`);
      const expected = resolveRoleNames({ ...emptyState, apikeys: piece.list === 'apikeys' ? piece.items : [] }, roles);
      if (!expected.ok) throw invalid(expected.message);
      if (piece.list === 'sshUsers') {
        if (read.apikeys.length > 0 || !sameList(read.sshUsers, piece.items, sameSshUser)) throw invalid(`SSH users from ${quoteName(piece.items[0]?.username)} read back differently`);
        for (const u of piece.items) identities.add('SSH user', u.username, u.id, false);
      } else {
        if (read.sshUsers.length > 0 || !sameList(read.apikeys, expected.desired.apikeys, sameApikey)) throw invalid(`apikeys from ${quoteName(piece.items[0]?.name)} read back differently`);
        for (const k of piece.items) identities.add('apikey', k.name, k.id, true);
      }
    }
  }
  const around = parse(frame);
  if (around.sshUsers.length > 0 || around.apikeys.length > 0 || !sameSettings(around, written)) throw invalid('what surrounds the lists reads back differently');
  const resolved = resolveRoleNames(written, roles);
  if (!resolved.ok) throw invalid(resolved.message);
  const roundTrip = planAgainstListing(resolved.desired);
  if (roundTrip.changes.length > 0 || roundTrip.problems.length > 0) {
    throw new AmsyncError(
      'export_not_round_trip',
      `the export would plan ${roundTrip.changes.length} changes and ${roundTrip.problems.length} problems instead of none; nothing was written. This is a bug in amsync: please report it`,
    );
  }
  return bytes;
}

const emptyState: DesiredState = { sshUsers: [], apikeys: [], prune: { sshUsers: false, apikeys: false }, protect: { sshUsers: [], apikeys: [] } };

const quoteName = (name: string | undefined): string => JSON.stringify(name ?? '');

/**
 * The desired-state file's own rule across the whole file (check-desired): a name declared
 * once, apikeys that share a name told apart by a pinned id, and an id pinned once per kind.
 */
class IdentityCheck {
  readonly #names = new Map<string, Set<string>>();
  readonly #ids = new Map<string, Set<number>>();

  add(kind: string, name: string, id: number | undefined, pinnedNamesMayRepeat: boolean): void {
    if (!(pinnedNamesMayRepeat && id !== undefined)) this.#once(this.#names, kind, name, `${kind} ${JSON.stringify(name)} is declared twice`);
    if (id !== undefined) this.#once(this.#ids, kind, id, `id ${id} is pinned twice`);
  }

  #once<T>(seen: Map<string, Set<T>>, kind: string, value: T, message: string): void {
    const set = seen.get(kind) ?? seen.set(kind, new Set()).get(kind)!;
    if (set.has(value)) throw new AmsyncError('export_invalid', `the export does not validate (${message}); nothing was written. This is a bug in amsync: please report it`);
    set.add(value);
  }
}

function sameList<T>(read: readonly T[], written: readonly T[], same: (a: T, b: T) => boolean): boolean {
  if (read.length !== written.length) return false;
  for (let i = 0; i < read.length; i += 1) if (!same(read[i]!, written[i]!)) return false;
  return true;
}

// What the planner reads of an item, by its kind's declaration (source positions differ by construction).
const sameSshUser = (a: DesiredSshUser, b: DesiredSshUser): boolean => sameDeclaredItem(sshUserKind, a, b);
const sameApikey = (a: DesiredApikey, b: DesiredApikey): boolean => sameDeclaredItem(apikeyKind, a, b);

function sameSettings(a: DesiredState, b: DesiredState): boolean {
  const sameGlobs = (x: readonly string[], y: readonly string[]) => x.length === y.length && x.every((g, i) => g === y[i]);
  return a.prune.sshUsers === b.prune.sshUsers && a.prune.apikeys === b.prune.apikeys && sameGlobs(a.protect.sshUsers, b.protect.sshUsers) && sameGlobs(a.protect.apikeys, b.protect.apikeys);
}
