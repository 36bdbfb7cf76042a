import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { secretFilesOf } from '../desired/index.js';
import type { DesiredState, Diagnostic } from '../model/index.js';
import { ownedTargets, type Shard } from './rendezvous.js';
import type { Target } from './target.js';

/** What a daemon of many targets runs from the files of a fleet, as this replica owns them. */
export interface OwnedInput {
  /** The selected targets of this replica's shard (all of them without one), in the file's order. */
  readonly targets: Target[];
  readonly desired: DesiredState;
  /** The desired file, the targets file and every secret file the desired file reads. */
  readonly watchFiles: string[];
  readonly warnings: readonly Diagnostic[];
  /** Identifies this version of both files for this shard, so warnings are logged once per version. */
  readonly fileHash: string;
}

/** The targets the shard owns of those selected, with the files to watch and the version of both. */
export function ownedInput(
  fleet: { readonly selected: readonly Target[]; readonly desired: DesiredState; readonly desiredFileHash: string; readonly warnings: readonly Diagnostic[] },
  files: { readonly desiredFile: string; readonly targetsFile: string },
  shard: Shard | undefined,
): OwnedInput {
  const owned = shard === undefined ? [...fleet.selected] : ownedTargets(fleet.selected, shard);
  return {
    targets: owned,
    desired: fleet.desired,
    watchFiles: [resolve(files.desiredFile), resolve(files.targetsFile), ...secretFilesOf(fleet.desired)],
    warnings: fleet.warnings,
    fileHash: createHash('sha256').update(`${fleet.desiredFileHash}\0${JSON.stringify(owned.map((t) => [t.name, t.url, t.labels]))}`).digest('hex'),
  };
}
