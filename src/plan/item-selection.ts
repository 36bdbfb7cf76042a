import type { Kind } from '../model/index.js';

/**
 * One item address of `--only`, `--exclude` or `--replace`: `KIND:NAME-GLOB` or `KIND#ID`,
 * as given (`text`, for messages and saved plans), compiled by the caller: the planner only
 * calls the name predicate it is given (the glob engine is not plan/'s).
 */
export type ItemAddress = { readonly text: string; readonly kind: Kind } & ({ readonly id: number } | { readonly matchesName: (name: string) => boolean });

/** The addresses of one run; `only` empty: every item, less `exclude`. */
export interface ItemSelection {
  readonly only: readonly ItemAddress[];
  readonly exclude: readonly ItemAddress[];
  /** `--replace`: declared items whose secret is issued again (SSH password, apikey token). */
  readonly replace: readonly ItemAddress[];
  /**
   * A fleet: each target's plan is filtered by the same addresses, and an address may name
   * items of some targets only, so matching nothing on one target is no error there.
   */
  readonly unmatchedAllowed?: boolean;
  /** `amsync rotate ADDR…`: the addresses are its arguments, so messages name it, not `--replace` or `--only`. */
  readonly command?: 'rotate';
}

/** The addresses as text, by flag: what a saved plan records and the CLI hands over. */
export interface SelectionFlags {
  readonly only: readonly string[];
  readonly exclude: readonly string[];
  readonly replace: readonly string[];
  /** A fleet's (see ItemSelection.unmatchedAllowed). */
  readonly unmatchedAllowed?: boolean;
  /** See ItemSelection.command; never saved in a plan. */
  readonly command?: 'rotate';
}

/** What the user typed to name the items whose secrets are issued again: `rotate` or `--replace`. */
export function replaceWord(selection: Pick<ItemSelection, 'command'> | undefined): string {
  return selection?.command === 'rotate' ? 'rotate' : '--replace';
}

/** Does `address` name the item of `kind` with these names (a declared and a remote one may differ) or this id? */
export function addressMatches(address: ItemAddress, kind: Kind, names: readonly string[], id: number | null | undefined): boolean {
  if (address.kind !== kind) return false;
  if ('id' in address) return id !== null && id !== undefined && address.id === id;
  return names.some((n) => address.matchesName(n));
}

/** Selected: named by some `--only` (or there is none), and by no `--exclude`. */
export function isSelected(selection: ItemSelection, kind: Kind, names: readonly string[], id: number | null | undefined): boolean {
  const hit = (a: ItemAddress) => addressMatches(a, kind, names, id);
  return (selection.only.length === 0 || selection.only.some(hit)) && !selection.exclude.some(hit);
}

/** Whether the selection limits the plan at all (`--replace` alone does not). */
export function isPartial(selection: ItemSelection | undefined): selection is ItemSelection {
  return selection !== undefined && selection.only.length + selection.exclude.length > 0;
}
