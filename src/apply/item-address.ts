import { UsageError } from '../errors.js';
import { compileGlob, globProblem } from '../glob/index.js';
import type { Kind } from '../model/index.js';
import type { ItemAddress, ItemSelection, SelectionFlags } from '../plan/index.js';

const kindNames: readonly Kind[] = ['sshUser', 'apikey'];

/** Why `text` is not an item address, or undefined when it is one. */
export function itemAddressProblem(text: string): string | undefined {
  const m = /^([A-Za-z]+)([:#])(.*)$/s.exec(text);
  if (!m) return 'KIND:NAME (a glob) or KIND#ID, with KIND sshUser or apikey';
  const [, kind, sep, rest] = m as unknown as [string, string, string, string];
  if (!(kindNames as readonly string[]).includes(kind)) return `KIND sshUser or apikey (as in --json), not "${kind}"`;
  if (sep === '#') return /^[1-9][0-9]{0,14}$/.test(rest) ? undefined : 'KIND#ID with ID a positive integer';
  if (rest === '') return 'KIND:NAME with a NAME (a glob such as ci-* or *)';
  const glob = globProblem(rest);
  return glob === undefined ? undefined : `KIND:NAME with a NAME glob amsync can match: ${glob}`;
}

/**
 * `KIND:NAME-GLOB` or `KIND#ID` (KIND `sshUser` or `apikey`): the address the planner takes,
 * its glob compiled as protect globs are (picomatch's syntax, matched in linear time on names
 * others control). A malformed one is a usage error naming the flag (exit 64).
 */
export function parseItemAddress(text: string, flag: string): ItemAddress {
  const problem = itemAddressProblem(text);
  if (problem !== undefined) throw new UsageError(`Expected \`${flag}\` to be ${problem}, got ${JSON.stringify(text)}`, 'bad_flag_value');
  const sep = /[:#]/.exec(text)!.index;
  const kind = text.slice(0, sep) as Kind;
  const rest = text.slice(sep + 1);
  return text[sep] === '#' ? { text, kind, id: Number(rest) } : { text, kind, matchesName: compileGlob(rest) };
}

/** The flags' addresses compiled for the planner; undefined when no flag was given. */
export function itemSelection(flags: SelectionFlags | undefined): ItemSelection | undefined {
  if (flags === undefined || flags.only.length + flags.exclude.length + flags.replace.length === 0) return undefined;
  return {
    only: flags.only.map((t) => parseItemAddress(t, '--only')),
    exclude: flags.exclude.map((t) => parseItemAddress(t, '--exclude')),
    replace: flags.replace.map((t) => parseItemAddress(t, '--replace')),
    ...(flags.unmatchedAllowed === true ? { unmatchedAllowed: true } : {}),
    ...(flags.command === undefined ? {} : { command: flags.command }),
  };
}
