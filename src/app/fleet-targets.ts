import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import {
  applyFleetPlan,
  desiredForTarget,
  loadTargets,
  readFleetPlan,
  runFleetSync,
  selectTargets,
  targetSettings,
  type FleetSyncResult,
  type SavedFleetPlan,
  type Target,
  type TargetOutcome,
} from '../fleet/index.js';
import type { Notifier } from '../notify/index.js';
import { createLogger, type Logger } from '../obs/index.js';
import { StalePlanError } from '../saved-plan/index.js';
import { planChoices, type PlanChoices } from './plan-and-apply.js';
import { resolveSettings, type DesiredPaths, type FlagValues, type Settings } from '../settings/index.js';
import { applySavedPlan, checkDesiredFileHash, checkSavedPlan } from '../sync/index.js';
import type { ServiceContext } from './app-context.js';
import { fileHashIfReadable, loadFleet, logTargetDone, runInTarget, type FleetSelection, type LoadedFleet } from './fleet-run.js';
import { notifyGraceMs } from './notify-run.js';
import { createNotifier, createServiceContext, logLevelOf, type LogStream } from './service-context.js';

type Env = Readonly<Record<string, string | undefined>>;

/** What every target's run in one fleet command shares. */
export interface FleetTargetsRun {
  /** The settings of the run, before each target's own are laid over them. */
  readonly base: Settings;
  readonly fleet: LoadedFleet;
  /** The desired source from -f, as a single service's context has it. */
  readonly source: DesiredPaths;
  readonly env: Env;
  readonly stderr: LogStream;
  readonly logger: Logger;
  /** One notifier for the whole fleet: each target's events name it; one grace period at the end. */
  readonly notifier: Notifier | undefined;
  /** Contexts with a run under way, for the interrupt's count of requests on the wire. */
  readonly open: Set<ServiceContext>;
  readonly concurrency: number;
  /** The interrupt: no target starts after it, and no write is sent. */
  readonly signal?: AbortSignal | undefined;
  /** Each target as it ends, in the file's order (the CLI prints its section); then it is logged. */
  onTargetDone(outcome: TargetOutcome): void;
}

/** The fleet's logger: the run's level (at a terminal, `warn` unless asked: logLevelOf), to stderr. */
export function fleetLogger(settings: Settings, stderr: LogStream, env: Env): Logger {
  return createLogger({ level: logLevelOf(settings, stderr), destination: stderr, pretty: stderr.isTTY === true, colorize: !env.NO_COLOR });
}

/** A fleet command's run: its logger, its one notifier, no context open yet. */
export function fleetTargetsRun(given: Omit<FleetTargetsRun, 'logger' | 'notifier' | 'open' | 'signal'>): FleetTargetsRun {
  const logger = fleetLogger(given.base, given.stderr, given.env);
  return { ...given, logger, notifier: createNotifier(given.base, given.env, logger), open: new Set<ServiceContext>() };
}

/** The notifications still queued get a bounded moment to go out. */
export async function closeFleetNotifier({ notifier }: Pick<FleetTargetsRun, 'notifier'>): Promise<void> {
  if (!notifier) return;
  await notifier.flush(notifyGraceMs);
  await notifier.close();
}

/** One target's context: its own settings over the run's, its logger, the fleet's notifier. */
async function targetContext(run: FleetTargetsRun, target: Target): Promise<ServiceContext> {
  return createServiceContext(
    { settings: targetSettings(run.base, target), source: run.source, env: run.env, stderr: run.stderr },
    {
      logger: run.logger.child({ target: target.name }),
      target: target.name,
      targetsFile: run.fleet.targetsFile,
      ...(run.notifier ? { notifier: run.notifier } : {}),
      // `mode: observe` in the targets file: drift reported, nothing written to this target.
      ...(target.mode === 'observe' ? { observeTarget: true } : {}),
    },
  );
}

function done(run: FleetTargetsRun): (outcome: TargetOutcome) => void {
  return (outcome) => {
    run.onTargetDone(outcome);
    logTargetDone(run.logger, outcome);
  };
}

/** `--only`, `--exclude`, `--replace` apply to each target's items (an address may match on some targets only). */
export type FleetSyncRequest = PlanChoices;

/** `plan` / `sync --targets`: each selected target planned (and applied unless a dry-run) with its own context. */
export function syncFleetTargets(run: FleetTargetsRun, request: FleetSyncRequest): Promise<FleetSyncResult> {
  const { dryRun } = request;
  return runFleetSync({
    targets: run.fleet.selected,
    desired: run.fleet.desired,
    concurrency: run.concurrency,
    ...(run.signal ? { signal: run.signal } : {}),
    stateFileOf: (target) => targetSettings(run.base, target).stateFile,
    syncTarget: async (target, desired) => {
      const service = await targetContext(run, target);
      return runInTarget(service, dryRun, run.open, async () => {
        service.client(); // an unsendable token is this target's failure, before any request
        return service.sync(desired, { ...planChoices(request), ...(run.signal ? { stopWrites: run.signal } : {}) });
      });
    },
    onTargetDone: done(run),
  });
}

/** What `amsync apply FLEETPLAN` was given: the flags' settings, `-f` where the file is now (else the plan's), the targets. */
export interface FleetPlanRequest {
  readonly planFile: string;
  readonly flags: FlagValues;
  /** `-f`, resolved only once the plan has been read (a plan that cannot be read is said first). */
  readonly desiredFile?: (() => string) | undefined;
  /** The desired file as a fleet takes it: one file (the CLI refuses --recursive here, after the settings). */
  readonly fleetFile: (desiredFile: string) => string;
  readonly selection: Omit<FleetSelection, 'desiredFile'>;
  readonly targetsFile: string;
  readonly version: string;
}

/**
 * A saved fleet plan, checked before any request: each target's plan of this version, and the
 * desired file still the bytes it was made from; then the settings and the fleet.
 */
export async function readFleetPlanChecked(request: FleetPlanRequest, env: Env): Promise<{ saved: SavedFleetPlan; base: Settings; fleet: LoadedFleet; desiredFile: string }> {
  const { planFile } = request;
  const saved = await readFleetPlan(resolve(planFile), planFile);
  for (const t of saved.targets) checkSavedPlan(t.plan, `${planFile} (target ${t.name})`, request.version);
  const desiredFile = request.desiredFile === undefined ? saved.desiredFile : request.desiredFile();
  const before = await fileHashIfReadable(desiredFile);
  if (before !== undefined && before !== saved.desiredFileHash) throw new StalePlanError(planFile, { reason: 'desired_file', desiredFile });
  const base = await resolveSettings(request.flags, env);
  const fleet = await loadFleet({ ...request.selection, desiredFile: request.fleetFile(desiredFile) }, env, request.targetsFile);
  checkDesiredFileHash(saved.targets[0]!.plan, planFile, desiredFile, fleet.desiredFileHash);
  return { saved, base, fleet, desiredFile };
}

/**
 * `amsync apply FLEETPLAN --targets FILE`: every target with changes checked, and written to
 * only when all are fresh (or, with `partial`, the fresh ones).
 */
export function applyFleetTargets(run: FleetTargetsRun & { readonly signal: AbortSignal }, request: { saved: SavedFleetPlan; planFile: string; desiredFile: string; partial: boolean }): Promise<readonly TargetOutcome[]> {
  const { fleet, signal } = run;
  return applyFleetPlan({
    saved: request.saved,
    planFile: request.planFile,
    targets: fleet.targets,
    concurrency: run.concurrency,
    partial: request.partial,
    signal,
    stateFileOf: (target) => targetSettings(run.base, target).stateFile,
    applyTarget: async (target, plan, beforeApply) => {
      const service = await targetContext(run, target);
      return runInTarget(service, false, run.open, async () => {
        service.client();
        // Opened before the first write, as for one service: a log that cannot be opened stops this target.
        const audit = plan.plan.changes.length > 0 ? service.auditTrail()?.hooks(plan.plan, 'saved-plan') : undefined;
        return applySavedPlan({
          saved: plan,
          planFile: request.planFile,
          desiredFile: request.desiredFile,
          desired: desiredForTarget(fleet.desired, target),
          desiredFileHash: fleet.desiredFileHash,
          // The interrupt stops this target's client too: writes waiting in its queue are never sent.
          service: service.service(undefined, undefined, signal),
          passwordState: () => service.passwordState(),
          tokenSink: service.tokenSink(),
          acquireLock: service.writerLock,
          maxInFlight: service.settings.concurrency,
          lateCreate: service.lateCreate(),
          signal,
          beforeApply,
          ...(audit ? { onAttempt: audit.onAttempt, onResult: audit.onResult } : {}),
        });
      });
    },
    onTargetDone: done(run),
  });
}

/** `export --targets FILE --target NAME`: the one target's settings, for the export's service context. */
export async function fleetExportSettings(opts: FlagValues & { readonly target?: readonly string[] }, env: Env, targetsFile: string): Promise<Settings> {
  const names = opts.target ?? [];
  if (names.length !== 1) throw new UsageError(`export writes one service's state: with --targets, name exactly one target with --target NAME${names.length > 1 ? ` (got ${names.length})` : ''}`, 'conflicting_flags');
  const targets = await loadTargets(targetsFile, env);
  const [target] = selectTargets(targets.targets, { names }, targetsFile);
  return targetSettings(await resolveSettings(opts, env), target!);
}
