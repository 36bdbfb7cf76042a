import { resolve } from 'node:path';
import { InterruptedError, UsageError } from '../errors.js';
import type { Logger } from '../obs/index.js';
import { createLogger } from '../obs/index.js';
import {
  applyFleetPlan,
  desiredForTarget,
  fleetExitCode,
  fleetSummaryLine,
  loadTargets,
  readFleetPlan,
  renderFleetJson,
  renderFleetMarkdown,
  renderTargetText,
  runFleetSync,
  selectTargets,
  summarizeFleet,
  targetSettings,
  toFleetJsonDocument,
  type FleetReportContext,
  type TargetOutcome,
} from '../fleet/index.js';
import { StalePlanError } from '../saved-plan/index.js';
import type { Settings } from '../settings/index.js';
import { applySavedPlan, checkDesiredFileHash, checkSavedPlan } from '../sync/index.js';
import {
  checkFleetOutputs,
  fileHashIfReadable,
  loadFleet as loadFleetOf,
  logTargetDone,
  notifyGraceMs,
  onWire,
  runInTarget,
  savable,
  saveFleetPlan,
  type LoadedFleet,
  type ServiceContext,
} from '../app/index.js';
import { annotateDiagnostics } from './annotations.js';
import type { CommandContext } from './command-context.js';
import { defaultTargetConcurrency, fleetDesiredFile, type FleetOptions } from './fleet-options.js';
import { formatDiagnostic } from './format-diagnostic.js';
import { catchInterrupts, interruptedSummary, type Interrupts } from './interrupts.js';
import { isInteractive, useColor, type CliIo } from './io.js';
import { errText } from './output.js';
import { markdownMaxChars } from './render-report.js';
import { appendStepSummary, writeReportFile } from './report-outputs.js';
import { resolveFormat, resolveSettings, type OutputFormat, type ServiceOptions } from './shared-options.js';
import { version } from './version.js';

/** Reads the targets file, then the desired file (-f, else the default) against it; exit 65 for either, nothing sent. */
export { validateFleet } from '../app/index.js';

export async function loadFleet(opts: ServiceOptions & FleetOptions, env: CliIo['env'], targetsFile: string): Promise<LoadedFleet> {
  return loadFleetOf({ desiredFile: fleetDesiredFile(opts, env), ...(opts.target ? { target: opts.target } : {}), ...(opts.selector ? { selector: opts.selector } : {}) }, env, targetsFile);
}

function fleetLogger(settings: Settings, io: Pick<CliIo, 'env' | 'stderr'>): Logger {
  return createLogger({ level: settings.logLevel, destination: io.stderr, pretty: io.stderr.isTTY === true, colorize: !io.env.NO_COLOR });
}

/** The options of `plan` and `sync` a fleet run reads (sync.ts's FleetSyncOptions has them all). */
export interface FleetSyncOptions extends ServiceOptions, FleetOptions {
  readonly rotatePasswords?: boolean;
  readonly allowEmptyPrune?: boolean;
  readonly deleteDuplicateApikeys?: boolean;
  readonly report?: string;
  readonly autoApprove?: boolean;
}

/**
 * `plan` / `sync` with `--targets`: each selected target planned (and applied, unless a
 * dry-run) with its own client, state file, token folder and writer lock, up to
 * `--target-concurrency` at once. Text output streams one section per target in the file's
 * order, then the fleet's summary line; `--json` and `--format markdown` print one document.
 */
export async function runFleetSyncCommand(opts: FleetSyncOptions & FleetOptions, dryRun: boolean, ctx: CommandContext, targetsFile: string): Promise<void> {
  const { io } = ctx;
  const env = io.env;
  const format = resolveFormat(opts);
  if (opts.out !== undefined && !dryRun) {
    throw new UsageError('--out saves a plan for `amsync apply` to apply later: use it with `amsync plan` or `amsync sync --dry-run`', 'conflicting_flags');
  }
  if (!dryRun && opts.autoApprove !== true && isInteractive(io)) {
    // One question for a whole fleet would have to wait for every target's plan; a reviewed
    // saved plan is the way to look before writing.
    throw new UsageError('a fleet sync does not ask for approval: add --auto-approve, or plan first (amsync plan --targets FILE --out plan.json) and apply that plan (amsync apply plan.json --targets FILE)', 'approval_needed');
  }
  const base = await resolveSettings(opts, env);
  const fleet = await loadFleet(opts, env, targetsFile);
  for (const w of fleet.warnings) io.stderr.write(errText(`${formatDiagnostic(w)}\n`));
  annotateDiagnostics(io, fleet.warnings);
  await checkFleetOutputs(base, fleet.selected, env, { writes: !dryRun, reportFile: opts.report, planFile: opts.out, stepSummary: true }, fleet.targetsFile, io.stderr);
  const logger = fleetLogger(base, io);
  const color = useColor(io.stdout, env);
  const context: FleetReportContext = { command: dryRun ? 'plan' : 'sync', dryRun, file: fleet.desiredFile };
  const open = new Set<ServiceContext>();
  const interrupts = dryRun ? undefined : catchInterrupts(io.signals ?? process, (text) => io.stderr.write(text), () => onWire(open));
  const { createNotifier, createServiceContext } = await import('./service-context.js');
  // One notifier for the whole fleet: each target's events name it; one grace period at the end.
  const notifier = createNotifier(base, env, logger);
  try {
    const { outcomes, syncs } = await runFleetSync({
      targets: fleet.selected,
      desired: fleet.desired,
      concurrency: opts.targetConcurrency ?? defaultTargetConcurrency,
      ...(interrupts ? { signal: interrupts.signal } : {}),
      stateFileOf: (target) => targetSettings(base, target).stateFile,
      syncTarget: async (target, desired) => {
        const service = await createServiceContext(opts, io, { logger: logger.child({ target: target.name }), settings: targetSettings(base, target), target: target.name, targetsFile: fleet.targetsFile, ...(notifier ? { notifier } : {}), ...(target.mode === 'observe' ? { observeTarget: true } : {}) });
        return runInTarget(service, dryRun, open, async () => {
          service.client(); // an unsendable token is this target's failure, before any request
          return service.sync(desired, {
            dryRun,
            rotatePasswords: opts.rotatePasswords,
            pruneAll: opts.prune,
            allowEmptyPrune: opts.allowEmptyPrune,
            deleteDuplicateApikeys: opts.deleteDuplicateApikeys,
            ...(interrupts ? { stopWrites: interrupts.signal } : {}),
          });
        });
      },
      onTargetDone: (outcome) => {
        if (format === 'text') io.stdout.write(renderTargetText(outcome, context, { color }));
        logTargetDone(logger, outcome);
      },
    });

    const planFile = opts.out !== undefined && savable(outcomes) ? opts.out : undefined;
    if (planFile !== undefined) await saveFleetPlan(planFile, fleet, base, syncs, opts, version);
    const withPlan = { ...context, ...(planFile === undefined ? {} : { planFile }) };
    io.stdout.write(renderFleet(outcomes, withPlan, format, { color, reportFile: opts.report }));
    await publishFleetReport(outcomes, withPlan, env, opts.report);
    if (planFile !== undefined) io.stderr.write(`Saved the fleet plan to ${planFile}. To apply exactly these changes: amsync apply ${planFile} --targets ${fleet.targetsFile}\n`);
    if (opts.out !== undefined && planFile === undefined) io.stderr.write(`No plan was saved to ${opts.out}: not every target could be planned (a fleet plan holds every target's; narrow the run with --target or --selector to leave one out).\n`);
    finish(outcomes, ctx, { dryRun, detailedExitcode: opts.detailedExitcode === true }, interrupts);
  } finally {
    interrupts?.dispose();
    if (notifier) {
      await notifier.flush(notifyGraceMs);
      await notifier.close();
    }
  }
}

function renderFleet(outcomes: readonly TargetOutcome[], context: FleetReportContext, format: OutputFormat, options: { color: boolean; reportFile?: string | undefined }): string {
  if (format === 'json') return renderFleetJson(outcomes, context);
  if (format === 'markdown') return renderFleetMarkdown(outcomes, context, { maxChars: markdownMaxChars, ...(options.reportFile === undefined ? {} : { reportFile: options.reportFile }) });
  // The sections streamed already: the summary line is what is left.
  return fleetSummaryLine(summarizeFleet(outcomes));
}

/** GITHUB_STEP_SUMMARY and `--report FILE`, as for a single service. */
async function publishFleetReport(outcomes: readonly TargetOutcome[], context: FleetReportContext, env: CliIo['env'], reportFile: string | undefined): Promise<void> {
  await appendStepSummary(env, renderFleetMarkdown(outcomes, context, { maxChars: markdownMaxChars, ...(reportFile === undefined ? {} : { reportFile }) }));
  if (reportFile === undefined) return;
  const { formatVersion, ...rest } = toFleetJsonDocument(outcomes, context);
  await writeReportFile(reportFile, { formatVersion, timestamp: new Date().toISOString(), ...rest });
}

/**
 * The fleet's exit code (1 if any target failed, else 3 if any was refused, else 2 for pending
 * changes with --detailed-exitcode), with one stderr line naming the targets that failed or
 * were refused. An interrupt wins: 130 / 143, as for a single service.
 */
function finish(outcomes: readonly TargetOutcome[], ctx: CommandContext, options: { dryRun: boolean; detailedExitcode?: boolean }, interrupts: Interrupts | undefined): void {
  const summary = summarizeFleet(outcomes);
  const names = (status: TargetOutcome['status']) => outcomes.filter((o) => o.status === status).map((o) => o.name);
  const listed = (list: string[]) => (list.length > 10 ? `${list.slice(0, 10).join(', ')}, … ${list.length - 10} more` : list.join(', '));
  const parts = [summary.failed > 0 ? `${summary.failed} failed (${listed(names('failed'))})` : '', summary.refused > 0 ? `${summary.refused} refused (${listed(names('refused'))})` : ''].filter(Boolean);
  if (interrupts?.received) throw new InterruptedError(interrupts.received, fleetInterrupted(outcomes, interrupts));
  if (parts.length > 0) ctx.io.stderr.write(`error: of ${summary.targets} targets, ${parts.join(', ')}: see each target's section above\n`);
  const code = fleetExitCode(summary, options);
  if (code !== 0) ctx.setExitCode(code);
}

/** The single service's counts over every target's results, and the targets the interrupt kept from starting. */
function fleetInterrupted(outcomes: readonly TargetOutcome[], interrupts: Interrupts): string {
  const results = outcomes.flatMap((o) => o.results ?? []);
  const unstarted = outcomes.filter((o) => o.status === 'skipped' && o.error?.code === 'interrupted').length;
  return `${interruptedSummary(interrupts, results)}${unstarted > 0 ? `; ${unstarted} target${unstarted === 1 ? ' was' : 's were'} not started` : ''}`;
}

export interface FleetApplyOptions extends ServiceOptions, FleetOptions {
  readonly report?: string;
  readonly partial?: boolean;
}

/**
 * `amsync apply FLEETPLAN --targets FILE`: refuses before any request when the desired file
 * changed or a plan is damaged or of another version; then checks every target with changes
 * and writes only when all are fresh (or, with --partial, to the fresh ones).
 */
export async function runFleetApplyCommand(planFile: string, opts: FleetApplyOptions, ctx: CommandContext, targetsFile: string): Promise<void> {
  const { io } = ctx;
  const env = io.env;
  const format = resolveFormat(opts);
  const saved = await readFleetPlan(resolve(planFile), planFile);
  for (const t of saved.targets) checkSavedPlan(t.plan, `${planFile} (target ${t.name})`, version);
  const desiredFile = opts.file === undefined ? saved.desiredFile : fleetDesiredFile(opts, env);
  const before = await fileHashIfReadable(desiredFile);
  if (before !== undefined && before !== saved.desiredFileHash) throw new StalePlanError(planFile, { reason: 'desired_file', desiredFile });
  const base = await resolveSettings(opts, env);
  const fleet = await loadFleet({ ...opts, file: desiredFile }, env, targetsFile);
  checkDesiredFileHash(saved.targets[0]!.plan, planFile, desiredFile, fleet.desiredFileHash);
  for (const w of fleet.warnings) io.stderr.write(errText(`${formatDiagnostic(w)}\n`));
  // Only the targets this plan writes to are contacted: their paths, and the fleet's report.
  const contacted = fleet.targets.filter((t) => saved.targets.some((p) => p.name === t.name && p.plan.plan.changes.length > 0));
  await checkFleetOutputs(base, contacted, env, { writes: true, reportFile: opts.report, stepSummary: true }, fleet.targetsFile, io.stderr);
  const logger = fleetLogger(base, io);
  const color = useColor(io.stdout, env);
  const context: FleetReportContext = { command: 'apply', dryRun: false, file: desiredFile, planFile };
  const open = new Set<ServiceContext>();
  const interrupts = catchInterrupts(io.signals ?? process, (text) => io.stderr.write(text), () => onWire(open));
  const { createNotifier, createServiceContext } = await import('./service-context.js');
  // One notifier for the whole fleet, as for a fleet sync.
  const notifier = createNotifier(base, env, logger);
  try {
    const outcomes = await applyFleetPlan({
      saved,
      planFile,
      targets: fleet.targets,
      concurrency: opts.targetConcurrency ?? defaultTargetConcurrency,
      partial: opts.partial === true,
      signal: interrupts.signal,
      stateFileOf: (target) => targetSettings(base, target).stateFile,
      applyTarget: async (target, plan, beforeApply) => {
        const service = await createServiceContext(opts, io, { logger: logger.child({ target: target.name }), settings: targetSettings(base, target), target: target.name, targetsFile: fleet.targetsFile, ...(notifier ? { notifier } : {}), ...(target.mode === 'observe' ? { observeTarget: true } : {}) });
        return runInTarget(service, false, open, async () => {
          service.client();
          // Opened before the first write, as for one service: a log that cannot be opened stops this target.
          const audit = plan.plan.changes.length > 0 ? service.auditTrail()?.hooks(plan.plan, 'saved-plan') : undefined;
          const outcome = await applySavedPlan({
            saved: plan,
            planFile,
            desiredFile,
            desired: desiredForTarget(fleet.desired, target),
            desiredFileHash: fleet.desiredFileHash,
            // The interrupt stops this target's client too: writes waiting in its queue are never sent.
            service: service.service(undefined, undefined, interrupts.signal),
            passwordState: () => service.passwordState(),
            tokenSink: service.tokenSink(),
            acquireLock: service.writerLock,
            maxInFlight: service.settings.concurrency,
            lateCreate: service.lateCreate(),
            signal: interrupts.signal,
            beforeApply,
            ...(audit ? { onAttempt: audit.onAttempt, onResult: audit.onResult } : {}),
          });
          return outcome;
        });
      },
      onTargetDone: (outcome) => {
        if (format === 'text') io.stdout.write(renderTargetText(outcome, context, { color }));
        logTargetDone(logger, outcome);
      },
    });
    io.stdout.write(renderFleet(outcomes, context, format, { color, reportFile: opts.report }));
    await publishFleetReport(outcomes, context, env, opts.report);
    finish(outcomes, ctx, { dryRun: false }, interrupts);
  } finally {
    if (notifier) {
      await notifier.flush(notifyGraceMs);
      await notifier.close();
    }
    interrupts.dispose();
  }
}

/** `export --targets FILE --target NAME`: the one target's settings, for the export's service context. */
export async function fleetExportSettings(opts: ServiceOptions & FleetOptions, env: CliIo['env'], targetsFile: string): Promise<Settings> {
  const names = opts.target ?? [];
  if (names.length !== 1) throw new UsageError(`export writes one service's state: with --targets, name exactly one target with --target NAME${names.length > 1 ? ` (got ${names.length})` : ''}`, 'conflicting_flags');
  const targets = await loadTargets(targetsFile, env);
  const [target] = selectTargets(targets.targets, { names }, targetsFile);
  return targetSettings(await resolveSettings(opts, env), target!);
}

