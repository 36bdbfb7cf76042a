import { anyGlob } from '../glob/index.js';
import type { Kind, PerKind } from '../model/index.js';

/**
 * Turns the file's protect globs into the predicate the planner takes. Globs read as picomatch
 * reads them (`bash`: names are not paths, so `*` matches any character, `/` included; `dot`:
 * globs match leading dots), but are matched in time linear in the name: remote names are
 * chosen by whoever can create an item, and a backtracking regex would let one name stall
 * every run (src/glob/linear-regex.ts).
 */
export function protectMatcher(protect: PerKind<readonly string[]>): (kind: Kind, key: string) => boolean {
  const users = anyGlob(protect.sshUsers);
  const keys = anyGlob(protect.apikeys);
  return (kind, key) => (kind === 'sshUser' ? users(key) : keys(key));
}
