import { loadDesired } from '../desired/index.js';
import type { DesiredState, Diagnostic } from '../model/index.js';
import { loadTargets } from './load-targets.js';
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
