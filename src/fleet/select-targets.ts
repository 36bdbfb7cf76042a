import { UsageError } from '../errors.js';
import type { DesiredState } from '../model/index.js';
import { didYouMean, quote } from '../yaml/index.js';
import { labelKeyPattern, labelValuePattern, selectorMatches, type SelectableTarget } from '../desired/index.js';

/** `--target NAME` (repeatable) and `--selector k=v` (repeatable, ANDed). */
export interface TargetFilter {
  readonly names?: readonly string[];
  readonly labels?: Readonly<Record<string, string>>;
}

/** `--selector site=sp` -> `['site', 'sp']`; a UsageError (64) for anything else. */
export function parseSelectorFlag(text: string): [string, string] {
  const at = text.indexOf('=');
  const key = at < 0 ? text : text.slice(0, at);
  const value = at < 0 ? '' : text.slice(at + 1);
  if (at < 0 || !labelKeyPattern.test(key) || !labelValuePattern.test(value)) {
    throw new UsageError(`Expected \`--selector\` to be KEY=VALUE with a label key and value (site=sp), got ${quote(text)}`, 'bad_flag_value');
  }
  return [key, value];
}

/**
 * The targets a run covers, in the file's order: those named by `--target` (all when none is)
 * that carry every `--selector` label. A name the file does not have, or a filter that leaves
 * no target, is a usage error (64): a typo must not make a fleet run silently do nothing.
 */
export function selectTargets<T extends SelectableTarget>(targets: readonly T[], filter: TargetFilter, file: string): T[] {
  const known = targets.map((t) => t.name);
  for (const name of filter.names ?? []) {
    if (!known.includes(name)) throw new UsageError(`--target ${quote(name)}: ${file} has no such target${didYouMean(name, known)}`, 'unknown_target');
  }
  const named = filter.names !== undefined && filter.names.length > 0 ? new Set(filter.names) : undefined;
  const labels = filter.labels ?? {};
  const chosen = targets.filter((t) => (named === undefined || named.has(t.name)) && selectorMatches({ labels }, t));
  if (chosen.length === 0) {
    const words = [named ? `--target ${[...named].join(', ')}` : '', Object.keys(labels).length > 0 ? `--selector ${Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(' ')}` : ''].filter(Boolean);
    throw new UsageError(`${words.join(' with ')} selects none of the ${targets.length} targets of ${file}`, 'no_target_selected');
  }
  return chosen;
}

/**
 * The desired state for one target: the items whose `targets:` (else the file's default)
 * select it, without the selectors. prune, protect and the guards then apply to it as to a
 * file of its own: with prune on, an item not selected for a target is deleted there. Pure.
 */
export function desiredForTarget(desired: DesiredState, target: SelectableTarget): DesiredState {
  const selects = (item: { readonly targets?: DesiredState['targets'] }) => selectorMatches(item.targets ?? desired.targets, target);
  const strip = <T extends { readonly targets?: unknown }>(item: T): T => {
    if (item.targets === undefined) return item;
    const { targets: _targets, ...rest } = item;
    return rest as T;
  };
  const { targets: _default, ...rest } = desired;
  return { ...rest, sshUsers: desired.sshUsers.filter(selects).map(strip), apikeys: desired.apikeys.filter(selects).map(strip) };
}
