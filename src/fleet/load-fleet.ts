import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { loadDesired, secretFilesOf } from '../desired/index.js';
import type { DesiredState, Diagnostic } from '../model/index.js';
import { loadTargets } from './load-targets.js';
import { ownedTargets, type Shard } from './rendezvous.js';
import { parseSelectorFlag, selectTargets } from './select-targets.js';
import type { Target } from './target.js';

/** The desired file loaded against a targets file: the names and labels `targets:` refers to. */
export interface LoadedFleetFiles {
  readonly targetsFile: string;
  readonly targets: readonly Target[];
  /** The targets this run covers (`--target`, `--selector`), in the file's order. */
  readonly selected: readonly Target[];
  readonly desiredFile: string;
  readonly desired: DesiredState;
  readonly desiredFileHash: string;
  readonly warnings: readonly Diagnostic[];
}

/** What a fleet run reads and covers: both files, and `--target NAME` and `--selector KEY=VALUE` as given. */
export interface FleetFiles {
  readonly targetsFile: string;
  /** The one desired-state file of the fleet. */
  readonly desiredFile: string;
  readonly target?: readonly string[] | undefined;
  readonly selector?: readonly string[] | undefined;
}

/** Reads the targets file, then the desired file against it, then selects; InvalidInputError for either file. */
export async function loadFleetFiles(files: FleetFiles, env: Readonly<Record<string, string | undefined>>): Promise<LoadedFleetFiles> {
  const { targetsFile, desiredFile } = files;
  const targets = await loadTargets(targetsFile, env);
  const loaded = await loadDesired(desiredFile, env, { targets: targets.targets });
  const labels = Object.fromEntries((files.selector ?? []).map(parseSelectorFlag));
  const selected = selectTargets(targets.targets, { names: files.target ?? [], labels }, targetsFile);
  return { targetsFile, targets: targets.targets, selected, desiredFile, desired: loaded.value, desiredFileHash: loaded.fileHash, warnings: [...targets.warnings, ...loaded.warnings] };
}

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
