import { createHash } from 'node:crypto';
import type { ActualState } from '../model/index.js';
import { apikeyKind, listedRow, sshUserKind } from '../model/index.js';

/**
 * A hash of the normalised listing, independent of listing order. A saved plan carries it;
 * `amsync apply` re-lists and refuses when it differs (the world moved since the review).
 *
 * The hashed bytes are `JSON.stringify({ users, keys })` of each item's `[id, ...listed fields]`
 * (in its kind's declaration order, sets sorted: model/kinds) sorted by id,
 * streamed into the hash a chunk at a time rather than built as one document (at 100k items
 * per kind that document and its tuples were ~30 MB at the peak of a sync).
 */
export function stateFingerprint(state: ActualState): string {
  const hash = createHash('sha256');
  let chunk = '{"users":[';
  const add = (text: string): void => {
    chunk += text;
    if (chunk.length >= 1 << 16) {
      hash.update(chunk);
      chunk = '';
    }
  };
  [...state.sshUsers]
    .sort((a, b) => a.id - b.id)
    .forEach((u, i) => add((i === 0 ? '' : ',') + JSON.stringify(listedRow(sshUserKind, u))));
  add('],"keys":[');
  [...state.apikeys]
    .sort((a, b) => a.id - b.id)
    .forEach((k, i) => add((i === 0 ? '' : ',') + JSON.stringify(listedRow(apikeyKind, k))));
  hash.update(`${chunk}]}`);
  return hash.digest('hex');
}
