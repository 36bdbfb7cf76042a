import { UsageError } from '../errors.js';
import type { ActualState, Change, IgnoredFields, Kind, Plan } from '../model/index.js';
import { identityOf, kinds } from '../model/index.js';
import type { DeclaredItem } from './declared-items.js';
import { addressMatches, isSelected, type ItemAddress, type ItemSelection } from './item-selection.js';

/**
 * `--only` / `--exclude`: the plan of the whole file, limited to the selected items. The full
 * plan is made first and only filtered here, never the inputs: a selection can only take
 * changes away, so no item outside it is ever written, and matching stays the planner's (a
 * remote item a left-out declaration claims is not mistaken for an undeclared one and pruned).
 * Prune, `ensure: absent` and duplicate deletes of unselected items are left out like the rest.
 *
 * An address that names no declared and no remote item is a usage error (exit 64), as is a
 * `--replace` of an item the selection leaves out.
 */
export function selectItems(plan: Plan, declared: readonly DeclaredItem[], actual: ActualState, selection: ItemSelection, replaced: readonly DeclaredItem[]): Plan {
  const remote = [...actual.sshUsers.map((u) => ({ kind: 'sshUser' as const, key: u.username, id: u.id })), ...actual.apikeys.map((k) => ({ kind: 'apikey' as const, key: k.name, id: k.id }))];
  for (const [flag, addresses] of [['--only', selection.only], ['--exclude', selection.exclude]] as const) {
    for (const a of addresses) {
      if (selection.unmatchedAllowed === true) break;
      if (!declared.some((d) => named(a, d)) && !remote.some((r) => addressMatches(a, r.kind, [r.key], r.id))) {
        throw new UsageError(`${flag} ${a.text} matches no declared and no remote item`, 'address_unmatched');
      }
    }
  }
  for (const d of replaced) {
    if (!isSelected(selection, d.kind, [d.key], d.remoteId)) throw new UsageError(`--replace: ${d.kind} "${d.key}" is left out by --only/--exclude; select it too`, 'replace_not_selected');
  }
  const selectedRef = (r: { kind: Kind; key: string; id?: number }) => isSelected(selection, r.kind, [r.key], r.id);
  const changes = plan.changes.filter((c) => changeSelected(selection, c));
  const problems = plan.problems.filter(selectedRef);
  const protectedRefs = plan.protected.filter(selectedRef);
  const chosen = declared.filter((d) => isSelected(selection, d.kind, [d.key], d.remoteId));
  // Unchanged: the selected declarations that nothing left in the plan is about.
  const about = (d: DeclaredItem) =>
    changes.some((c) => c.kind === d.kind && (c.key === d.key || (d.remoteId !== undefined && (c.id === d.remoteId || c.replaces === d.remoteId)))) ||
    problems.some((p) => p.kind === d.kind && p.key === d.key) ||
    protectedRefs.some((p) => p.kind === d.kind && (p.key === d.key || p.id === d.remoteId));
  const omitted = { declared: declared.length - chosen.length, remote: remote.filter((r) => !selectedRef(r)).length };
  // Observed drift and ignored fields are reported of the selected items only, like changes.
  const observed = plan.observed?.filter((c) => changeSelected(selection, c)) ?? [];
  const ignored = selectedIgnored(plan.ignored ?? [], chosen);
  // `amsync rotate ADDR…` selects by its arguments: the note names them as the user typed them.
  const rotate = selection.command === 'rotate';
  const flags = rotate ? `rotate ${selection.only.map((a) => a.text).join(' ')}` : [...selection.only.map((a) => `--only ${a.text}`), ...selection.exclude.map((a) => `--exclude ${a.text}`)].join(' ');
  const partial: Plan = {
    ...plan,
    changes,
    unchanged: chosen.filter((d) => !about(d)).length,
    unmanaged: plan.unmanaged.filter(selectedRef),
    protected: protectedRefs,
    problems,
    notes: [
      ...plan.notes,
      `Partial plan (${flags}): ${omitted.declared} declared and ${omitted.remote} remote item${omitted.remote === 1 ? ' was' : 's were'} left out and will not be changed; ${rotate ? 'amsync sync' : 'a run without --only/--exclude'} plans the whole file.`,
    ],
    selection: { only: selection.only.map((a) => a.text), exclude: selection.exclude.map((a) => a.text), omitted },
  };
  // Absent when none is left, as in a plan that had none; the fields keep their places.
  const out: { -readonly [K in keyof Plan]: Plan[K] } = { ...partial };
  if (out.observed !== undefined) out.observed = observed;
  if (out.ignored !== undefined) out.ignored = ignored;
  if (observed.length === 0) delete out.observed;
  if (ignored.length === 0) delete out.ignored;
  return out;
}

/** The ignored fields of the chosen declarations: `all` stays (every item ignores it), a list keeps the chosen keys. */
function selectedIgnored(ignored: readonly IgnoredFields[], chosen: readonly DeclaredItem[]): IgnoredFields[] {
  return ignored.flatMap((f) => {
    if (f.keys === 'all') return chosen.some((d) => d.kind === f.kind) ? [f] : [];
    const keys = f.keys.filter((key) => chosen.some((d) => d.kind === f.kind && d.key === key));
    return keys.length === 0 ? [] : [{ ...f, keys }];
  });
}

function named(a: ItemAddress, d: DeclaredItem): boolean {
  return addressMatches(a, d.kind, [d.key], d.remoteId);
}

/** Whether a selection covers a change: by its names (a rename has two) or its id (a successor: the replaced id). */
export function changeSelected(selection: ItemSelection, c: Change): boolean {
  return isSelected(selection, c.kind, namesOf(c), c.id ?? c.replaces);
}

/** A change's names: its key, and the name it renames away from. */
function namesOf(c: Change): string[] {
  const identity = identityOf(kinds[c.kind]);
  const before = (c.fields as Readonly<Record<string, { before: unknown } | undefined>>)[identity]?.before;
  return typeof before === 'string' && before !== c.key ? [c.key, before] : [c.key];
}
