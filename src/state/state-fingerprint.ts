import { createHash } from 'node:crypto';
import type { ActualState } from '../model/index.js';

/**
 * A hash of the normalised listing, independent of listing order. A saved plan carries it;
 * `amsync apply` re-lists and refuses when it differs (the world moved since the review).
 */
export function stateFingerprint(state: ActualState): string {
  const users = [...state.sshUsers].sort((a, b) => a.id - b.id).map((u) => [u.id, u.username, u.level]);
  const keys = [...state.apikeys].sort((a, b) => a.id - b.id).map((k) => [k.id, k.name, k.superuser, [...k.roles].sort((x, y) => x - y)]);
  return createHash('sha256').update(JSON.stringify({ users, keys })).digest('hex');
}
