import picomatch from 'picomatch';
import type { Kind, PerKind } from '../model/index.js';

/**
 * Turns the file's protect globs into the predicate the planner takes. Names are not paths:
 * `bash` makes `*` match any character, `/` included, and `dot` lets globs match leading dots.
 */
export function protectMatcher(protect: PerKind<readonly string[]>): (kind: Kind, key: string) => boolean {
  const compile = (globs: readonly string[]) => (globs.length === 0 ? () => false : picomatch([...globs], { bash: true, dot: true }));
  const users = compile(protect.sshUsers);
  const keys = compile(protect.apikeys);
  return (kind, key) => (kind === 'sshUser' ? users(key) : keys(key));
}
