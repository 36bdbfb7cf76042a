import { createHash } from 'node:crypto';
import { dirname, relative, resolve } from 'node:path';
import { loadDesired } from '../desired/index.js';
import { AmsyncError, InvalidInputError } from '../errors.js';
import {
  desiredForTarget,
  loadTargets,
  parseSelectorFlag,
  selectTargets,
  targetSettings,
  writeFleetPlan,
  type SavedFleetPlan,
  type Target,
  type TargetOutcome,
} from '../fleet/index.js';
import { diagnosticCodes, type DesiredState, type Diagnostic } from '../model/index.js';
import type { Logger } from '../obs/index.js';
import { passwordReferences, toSavedPlan } from '../saved-plan/index.js';
import { sinkNameFindings } from '../secrets/index.js';
import type { Settings } from '../settings/index.js';
import type { SyncOutcome } from '../sync/index.js';
import { readBounded } from '../yaml/index.js';
import type { ServiceContext } from './app-context.js';
import { throwOnAuditFailure } from './audit-failure.js';
import { secretSinkOf } from './secret-sink-of.js';
import { savedSelection, type PlanShape } from './save-plan.js';

type Env = Readonly<Record<string, string | undefined>>;

/** Which targets a fleet run covers and the desired file it keeps on them: `--target`, `--selector`, `-f`. */
export interface FleetSelection {
  readonly desiredFile: string;
  readonly target?: readonly string[];
  readonly selector?: readonly string[];
}

/** The desired file loaded against a targets file: the names and labels `targets:` refers to. */
export interface LoadedFleet {
  readonly targetsFile: string;
  readonly targets: readonly Target[];
  /** The targets this run covers (`--target`, `--selector`), in the file's order. */
  readonly selected: readonly Target[];
  readonly desiredFile: string;
  readonly desired: DesiredState;
  readonly desiredFileHash: string;
  readonly warnings: readonly Diagnostic[];
}

/**
 * The fleet's checkSinkNames: an item whose secret a selected target's sink (its own tokensDir
 * folder or Secret) could never store under its name is refused before any request of any
 * target (exit 65), as a single service's sync refuses it; each line names the target. Targets
 * observed as a whole write no secret and are not checked.
 */
export function checkFleetSinkNames(base: Settings, fleet: Pick<LoadedFleet, 'selected' | 'desired'>): void {
  const findings: Diagnostic[] = [];
  for (const target of fleet.selected) {
    if (target.mode === 'observe') continue;
    const sink = secretSinkOf(targetSettings(base, target));
    for (const f of sinkNameFindings(desiredForTarget(fleet.desired, target), sink)) findings.push({ ...f, message: `target ${target.name}: ${f.message}` });
  }
  if (findings.length === 0) return;
  const n = findings.length;
  throw new InvalidInputError(`${n} secret${n === 1 ? '' : 's'} cannot be stored by the targets' sinks under their names; nothing was sent to any target`, findings, diagnosticCodes.sinkName);
}

/** Reads the targets file, then the desired file against it; exit 65 for either, nothing sent. */
export async function loadFleet(request: FleetSelection, env: Env, targetsFile: string): Promise<LoadedFleet> {
  const targets = await loadTargets(targetsFile, env);
  const desiredFile = request.desiredFile;
  const loaded = await loadDesired(desiredFile, env, { targets: targets.targets });
  const labels = Object.fromEntries((request.selector ?? []).map(parseSelectorFlag));
  const selected = selectTargets(targets.targets, { names: request.target ?? [], labels }, targetsFile);
  return { targetsFile, targets: targets.targets, selected, desiredFile, desired: loaded.value, desiredFileHash: loaded.fileHash, warnings: [...targets.warnings, ...loaded.warnings] };
}

/** Only a fleet whose every target planned cleanly is saved: a reviewed plan is the whole fleet's. */
export function savable(outcomes: readonly TargetOutcome[]): boolean {
  return outcomes.every((o) => (o.status === 'changed' || o.status === 'unchanged') && o.plan !== undefined && o.plan.problems.length === 0);
}

/** Requests sent and not answered yet, over the targets running now. */
export function onWire(open: ReadonlySet<ServiceContext>): number {
  let n = 0;
  for (const context of open) n += context.onWire();
  return n;
}

export function logTargetDone(logger: Logger, outcome: TargetOutcome): void {
  const fields = { target: outcome.name, status: outcome.status, changes: outcome.plan?.changes.length ?? 0, ...(outcome.error ? { code: outcome.error.code } : {}) };
  if (outcome.status === 'failed' || outcome.status === 'refused') logger.warn(fields, `target ${outcome.name}: ${outcome.status}: ${outcome.error?.message ?? ''}`);
  else logger.debug(fields, `target ${outcome.name}: ${outcome.status}`);
}

/** `--out` for a fleet: every target's saved plan, made exactly as `plan --out` makes one. */
export async function saveFleetPlan(
  planFile: string,
  fleet: LoadedFleet,
  base: Settings,
  syncs: readonly (SyncOutcome | undefined)[],
  opts: PlanShape,
  version: string,
): Promise<void> {
  const desiredDir = dirname(resolve(fleet.desiredFile));
  const createdAt = new Date().toISOString();
  const saved: SavedFleetPlan = {
    formatVersion: 1,
    kind: 'amsync-fleet-plan',
    amsyncVersion: version,
    createdAt,
    desiredFile: fleet.desiredFile,
    desiredFileHash: fleet.desiredFileHash,
    targetsFile: fleet.targetsFile,
    targets: fleet.selected.map((target, i) => {
      const sync = syncs[i]!;
      const plan = toSavedPlan({
        amsyncVersion: version,
        createdAt,
        desiredFile: fleet.desiredFile,
        desiredFileHash: fleet.desiredFileHash,
        serviceUrl: target.url,
        settings: {
          prune: sync.policy.prune,
          rotatePasswords: opts.rotatePasswords === true,
          passwordMode: sync.policy.passwords.mode,
          allowEmptyPrune: opts.allowEmptyPrune === true,
          maxDeletes: base.maxDeletes,
          ...(opts.deleteDuplicateApikeys === true ? { deleteDuplicateApikeys: true } : {}),
          ...savedSelection(opts),
          ...(sync.policy.observe === true ? { observe: true } : {}),
        },
        actualFingerprint: sync.actualFingerprint,
        plan: sync.plan,
        passwords: passwordReferences(sync.plan, desiredForTarget(fleet.desired, target), (abs) => relative(desiredDir, abs).split('\\').join('/')),
        actual: sync.actual,
      });
      return { name: target.name, url: target.url, plan };
    }),
  };
  try {
    await writeFleetPlan(resolve(planFile), saved);
  } catch (error) {
    throw new AmsyncError('plan_unwritable', `cannot write the plan file ${planFile}: ${(error as NodeJS.ErrnoException).code ?? 'write error'}`, { cause: error });
  }
}

/** The desired file's hash, or undefined when it cannot be read (loading it says why, exit 65). */
export async function fileHashIfReadable(path: string): Promise<string | undefined> {
  try {
    return createHash('sha256').update(await readBounded(path)).digest('hex');
  } catch {
    return undefined; // loading it says why (exit 65)
  }
}

/** validate --targets: the targets file, then the desired file against it (secrets as warnings unless required). */
export async function validateFleet(targetsFile: string, env: Env, secrets: 'require' | 'warn'): Promise<{ targets?: readonly Target[]; diagnostics: readonly Diagnostic[] }> {
  try {
    const targets = await loadTargets(targetsFile, env, { secrets, checkCaFiles: true });
    return { targets: targets.targets, diagnostics: targets.warnings };
  } catch (error) {
    if (error instanceof InvalidInputError) return { diagnostics: error.diagnostics };
    throw error;
  }
}

/**
 * One target's run inside a fleet run: its outcome told to the webhooks (the events name the
 * target), a lost audit result line made its failure, and its context closed whatever happens.
 */
export async function runInTarget<T extends Pick<SyncOutcome, 'plan' | 'results' | 'refusal' | 'cancelled'>>(
  service: ServiceContext,
  dryRun: boolean,
  open: Set<ServiceContext>,
  work: () => Promise<T>,
): Promise<T> {
  open.add(service);
  try {
    const outcome = await work();
    service.notifyOutcome(outcome, dryRun);
    throwOnAuditFailure(service.auditTrail());
    return outcome;
  } catch (error) {
    service.notifyFailure(error);
    throw error;
  } finally {
    open.delete(service);
    // A key renewal the last request started is waited for: a rotated key lost fails the target.
    await service.finish(0);
  }
}

