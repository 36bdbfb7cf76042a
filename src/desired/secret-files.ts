import type { DesiredState } from '../model/index.js';

/**
 * Absolute paths of the secret files a desired state reads passwords from, sorted and
 * unique: the daemon watches them so a rotated password re-syncs.
 */
export function secretFilesOf(state: DesiredState): string[] {
  const files = new Set<string>();
  for (const user of state.sshUsers) {
    if (user.passwordRef?.kind === 'file') files.add(user.passwordRef.path);
  }
  return [...files].sort();
}
