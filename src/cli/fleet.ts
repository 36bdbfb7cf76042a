import { formatDiagnostic } from '../model/index.js';
import { renderTargetText, type FleetReportContext, type TargetOutcome } from '../fleet/index.js';
import { resolveDesiredSource, resolveSettings } from '../settings/index.js';
import {
  applyFleetTargets,
  checkFleetOutputs,
  checkFleetSinkNames,
  closeFleetNotifier,
  fleetRunEnd,
  fleetTargetsRun,
  loadFleet as loadFleetOf,
  onWire,
  publishFleetReport,
  readFleetPlanChecked,
  renderFleetReport,
  savable,
  saveFleetPlan,
  syncFleetTargets,
  type FleetTargetsRun,
  type LoadedFleet,
} from '../app/index.js';
import { annotateDiagnostics } from './annotations.js';
import type { CommandContext } from './command-context.js';
import { defaultTargetConcurrency, fleetDesiredFile, type FleetOptions } from './fleet-options.js';
import { catchInterrupts, type Interrupts } from './interrupts.js';
import { useColor, type CliIo } from './io.js';
import { errText } from './output.js';
import { resolveFormat, type ServiceOptions } from './shared-options.js';
import { version } from './version.js';
import { withSelection } from './selection-flags.js';
import type { SyncCommandOptions } from './plan-options.js';

/** Reads the targets file, then the desired file (-f, else the default) against it; exit 65 for either, nothing sent. */
export { validateFleet, fleetExportSettings } from '../app/index.js';

export async function loadFleet(opts: ServiceOptions & FleetOptions, env: CliIo['env'], targetsFile: string): Promise<LoadedFleet> {
  return loadFleetOf({ desiredFile: fleetDesiredFile(opts, env), ...(opts.target ? { target: opts.target } : {}), ...(opts.selector ? { selector: opts.selector } : {}) }, env, targetsFile);
}

/** A fleet run is given the options of `plan` and `sync`. */
type FleetSyncOptions = SyncCommandOptions;

function runOf(opts: ServiceOptions & FleetOptions, io: CliIo, at: Pick<FleetTargetsRun, 'base' | 'fleet' | 'onTargetDone'>): FleetTargetsRun {
  return fleetTargetsRun({ ...at, source: resolveDesiredSource(opts, io.env), env: io.env, stderr: io.stderr, concurrency: opts.targetConcurrency ?? defaultTargetConcurrency });
}

/**
 * `plan` / `sync` with `--targets`: each selected target planned (and applied, unless a
 * dry-run) with its own client, state file, token folder and writer lock, up to
 * `--target-concurrency` at once. Text output streams one section per target in the file's
 * order, then the fleet's summary line; `--json` and `--format markdown` print one document.
 */
export async function runFleetSyncCommand(opts: FleetSyncOptions, dryRun: boolean, ctx: CommandContext, targetsFile: string): Promise<void> {
  const { io } = ctx;
  const env = io.env;
  const format = resolveFormat(opts);
  // Its flags were checked with a single service's (sync.ts).
  const base = await resolveSettings(opts, env);
  const fleet = await loadFleet(opts, env, targetsFile);
  for (const w of fleet.warnings) io.stderr.write(errText(`${formatDiagnostic(w)}\n`));
  annotateDiagnostics(io, fleet.warnings);
  await checkFleetOutputs(base, fleet.selected, env, { writes: !dryRun, reportFile: opts.report, planFile: opts.out, stepSummary: true }, fleet.targetsFile, io.stderr);
  checkFleetSinkNames(base, fleet);
  const color = useColor(io.stdout, env);
  const context: FleetReportContext = { command: dryRun ? 'plan' : 'sync', dryRun, file: fleet.desiredFile };
  const onTargetDone = (outcome: TargetOutcome) => {
    if (format === 'text') io.stdout.write(renderTargetText(outcome, context, { color }));
  };
  const run = runOf(opts, io, { base, fleet, onTargetDone });
  const interrupts = dryRun ? undefined : catchInterrupts(io.signals ?? process, (text) => io.stderr.write(text), () => onWire(run.open));
  try {
    const request = { dryRun, rotatePasswords: opts.rotatePasswords, prune: opts.prune, allowEmptyPrune: opts.allowEmptyPrune, deleteDuplicateApikeys: opts.deleteDuplicateApikeys, ...withSelection(opts, true) };
    const { outcomes, syncs } = await syncFleetTargets({ ...run, signal: interrupts?.signal }, request);
    const planFile = opts.out !== undefined && savable(outcomes) ? opts.out : undefined;
    if (planFile !== undefined) await saveFleetPlan(planFile, fleet, base, syncs, { ...opts, ...withSelection(opts, true) }, version);
    const withPlan = { ...context, ...(planFile === undefined ? {} : { planFile }) };
    io.stdout.write(renderFleetReport(outcomes, withPlan, format, { color, reportFile: opts.report }));
    await publishFleetReport(outcomes, withPlan, env, opts.report);
    if (planFile !== undefined) io.stderr.write(`Saved the fleet plan to ${planFile}. To apply exactly these changes: amsync apply ${planFile} --targets ${fleet.targetsFile}\n`);
    if (opts.out !== undefined && planFile === undefined) io.stderr.write(`No plan was saved to ${opts.out}: not every target could be planned (a fleet plan holds every target's; narrow the run with --target or --selector to leave one out).\n`);
    finish(outcomes, ctx, { dryRun, detailedExitcode: opts.detailedExitcode === true }, interrupts);
  } finally {
    interrupts?.dispose();
    await closeFleetNotifier(run);
  }
}

/** Exit code and failure line from the app; an interrupt is thrown from there (130 / 143). */
function finish(outcomes: readonly TargetOutcome[], ctx: CommandContext, options: { dryRun: boolean; detailedExitcode?: boolean }, interrupts: Interrupts | undefined): void {
  const { code, stderr } = fleetRunEnd(outcomes, options, interrupts);
  ctx.io.stderr.write(stderr);
  if (code !== 0) ctx.setExitCode(code);
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
  const selection = { ...(opts.target ? { target: opts.target } : {}), ...(opts.selector ? { selector: opts.selector } : {}) };
  const desiredFileOf = opts.file === undefined ? undefined : () => fleetDesiredFile(opts, env);
  const { saved, base, fleet, desiredFile } = await readFleetPlanChecked({ planFile, flags: opts, desiredFile: desiredFileOf, fleetFile: (file) => fleetDesiredFile({ ...opts, file }, env), selection, targetsFile, version }, env);
  for (const w of fleet.warnings) io.stderr.write(errText(`${formatDiagnostic(w)}\n`));
  // Only the targets this plan writes to are contacted: their paths, and the fleet's report.
  const contacted = fleet.targets.filter((t) => saved.targets.some((p) => p.name === t.name && p.plan.plan.changes.length > 0));
  await checkFleetOutputs(base, contacted, env, { writes: true, reportFile: opts.report, stepSummary: true }, fleet.targetsFile, io.stderr);
  const color = useColor(io.stdout, env);
  const context: FleetReportContext = { command: 'apply', dryRun: false, file: desiredFile, planFile };
  const onTargetDone = (outcome: TargetOutcome) => {
    if (format === 'text') io.stdout.write(renderTargetText(outcome, context, { color }));
  };
  const run = runOf(opts, io, { base, fleet, onTargetDone });
  const interrupts = catchInterrupts(io.signals ?? process, (text) => io.stderr.write(text), () => onWire(run.open));
  try {
    const outcomes = await applyFleetTargets({ ...run, signal: interrupts.signal }, { saved, planFile, desiredFile, partial: opts.partial === true });
    io.stdout.write(renderFleetReport(outcomes, context, format, { color, reportFile: opts.report }));
    await publishFleetReport(outcomes, context, env, opts.report);
    finish(outcomes, ctx, { dryRun: false }, interrupts);
  } finally {
    await closeFleetNotifier(run);
    interrupts.dispose();
  }
}
