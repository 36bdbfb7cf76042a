import { stat } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { targetSettings, type Target } from '../fleet/index.js';
import { localPathError, LocalPathError, probeWritable } from '../secrets/index.js';
import type { Settings } from '../settings/index.js';
import { localOutputsOf, settingWords, type LocalOutput, type PlannedOutputs } from './check-local-outputs.js';

/** The paths kept beside a target's state file: one refused folder refuses them all, so one line says it. */
const stateGroup = new Set(['state_file_unwritable', 'writer_lock_unwritable', 'state_key_unwritable']);

/**
 * A fleet's checkLocalOutputs: every selected target's own paths (its state file, lock and key,
 * its tokensDir folder, its integrator key file, which a rotating service needs written back)
 * and the fleet's shared ones (audit log, report, plan, step summary), all before any request
 * of any target (README, "Safety"): one target's unwritable volume found after another target's
 * writes would leave the fleet half done for a reason known at start. Every bad path is a line
 * of its own naming the target, the path, how it is set and the fix; all but the last are
 * written to `stderr`, the last is thrown (LocalPathError, exit 1).
 */
export async function checkFleetOutputs(
  base: Settings,
  targets: readonly Target[],
  env: Readonly<Record<string, string | undefined>>,
  planned: PlannedOutputs,
  targetsFile: string,
  stderr: { write(text: string): unknown },
): Promise<void> {
  const problems: LocalPathError[] = [];
  for (const target of targets) problems.push(...(await targetProblems(base, target, env, planned.writes, targetsFile)));
  const shared = localOutputsOf({ ...base, tokensDir: undefined }, env, planned).filter((o) => !stateGroup.has(o.code));
  for (const output of shared) {
    const problem = await probe(output);
    if (problem) problems.push(problem);
  }
  const last = problems.pop();
  if (last === undefined) return;
  for (const problem of problems) stderr.write(`error: ${problem.message}\n`);
  throw last;
}

async function targetProblems(base: Settings, target: Target, env: Readonly<Record<string, string | undefined>>, writes: boolean, targetsFile: string): Promise<LocalPathError[]> {
  const settings = targetSettings(base, target);
  const problems: LocalPathError[] = [];
  const outputs = localOutputsOf({ stateFile: settings.stateFile, tokensDir: settings.tokensDir, auditLog: undefined }, env, { writes }).map((o) => ownedBy(o, target.name));
  let stateRefused = false;
  for (const output of outputs) {
    if (stateRefused && stateGroup.has(output.code)) continue;
    const problem = await probe(output, target.name);
    if (!problem) continue;
    problems.push(problem);
    stateRefused ||= stateGroup.has(output.code);
  }
  // A plan writes no tokens, but a tokensDir that is a file is refused by every command (checkLocalInputs).
  if (!writes && settings.tokensDir !== undefined) {
    const problem = await notAFolder(resolve(settings.tokensDir), target.name);
    if (problem) problems.push(problem);
  }
  if (settings.refreshTokenFile !== undefined) {
    const key: LocalOutput = {
      what: 'the integrator key file',
      path: resolve(settings.refreshTokenFile),
      setting: `integratorKey.file of target ${target.name} in ${basename(targetsFile)}`,
      knob: 'integratorKey.file',
      // A rotated key is written beside the old one and renamed over it: only its folder matters here.
      mode: 'beside',
      code: 'integrator_key_not_writable',
    };
    const problem = await probe(key, target.name);
    if (problem) problems.push(problem);
  }
  return problems;
}

/** A target's state file, lock, key and tokensDir say whose they are and what they are made from. */
function ownedBy(output: LocalOutput, target: string): LocalOutput {
  if (output.code === 'state_file_unwritable') return { ...output, setting: `target ${target}'s own, beside ${settingWords('stateFile')}` };
  if (output.code === 'tokens_dir') return { ...output, setting: `target ${target}'s folder in ${settingWords('tokensDir')}` };
  return output;
}

async function probe(output: LocalOutput, target?: string): Promise<LocalPathError | undefined> {
  try {
    await probeWritable(output.path, output.mode);
    return undefined;
  } catch (error) {
    return named(localPathError(error, output, { code: output.code, nothingSent: true }), target);
  }
}

async function notAFolder(path: string, target: string): Promise<LocalPathError | undefined> {
  let error: unknown;
  try {
    if ((await stat(path)).isDirectory()) return undefined;
    error = Object.assign(new Error(`ENOTDIR: not a directory, '${path}'`), { code: 'ENOTDIR', path });
  } catch (caught) {
    if ((caught as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    error = caught;
  }
  const output = { what: 'tokensDir', path, setting: `target ${target}'s folder in ${settingWords('tokensDir')}`, knob: '--tokens-dir', folder: true };
  return named(localPathError(error, output, { code: 'tokens_dir', nothingSent: true }), target);
}

/** `target two: cannot write …`: in a fleet, every line says whose path it is. */
function named(error: LocalPathError, target: string | undefined): LocalPathError {
  if (target === undefined) return error;
  return new LocalPathError(error.code, `target ${target}: ${error.message}`, error.path, error.errno, { cause: error.cause });
}
