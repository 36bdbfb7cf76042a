import type { SelectionFlags } from '../plan/index.js';

/** `--only`, `--exclude`, `--replace ADDR` as commander collects them (issue 29). */
export interface SelectionOptions {
  readonly only?: readonly string[];
  readonly exclude?: readonly string[];
  readonly replace?: readonly string[];
  /** Set by `amsync rotate`: its arguments are the addresses (messages name it). */
  readonly selectionBy?: 'rotate';
}

/** The item addresses of the command line, as the app's requests take them: none without any. */
export function withSelection(opts: SelectionOptions, fleet = false): { selection?: SelectionFlags } {
  const only = opts.only ?? [];
  const exclude = opts.exclude ?? [];
  const replace = opts.replace ?? [];
  if (only.length + exclude.length + replace.length === 0) return {};
  return { selection: { only, exclude, replace, ...(fleet ? { unmatchedAllowed: true } : {}), ...(opts.selectionBy === undefined ? {} : { command: opts.selectionBy }) } };
}
