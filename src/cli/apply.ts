import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { SavedPlan } from '../saved-plan/index.js';
import { InvalidInputError, SafetyError, UsageError } from '../errors.js';
import { applySaved, checkSavedPlanFiles, confirmPlanService, finishRun, interruptedInstead, notifyGraceMs, publishRefusal, publishReport, savedPlanReport, savedPlanSource, type BodyEnd, throwAfterRun } from '../app/index.js';
import { formatDiagnostic, type ChangeResult, type Diagnostic } from '../model/index.js';
import type { CommandContext } from './command-context.js';
import { catchInterrupts } from './interrupts.js';
import { useColor, type CliIo, type Env } from './io.js';
import type { DesiredSource } from '../desired/index.js';
import { describeSource, resolveDesiredSource } from '../settings/index.js';
import {
  addConnectionOptions,
  addFileOption,
  addLocalStateOptions,
  addWriterOptions,
  addOutputOptions,
  refuseOptions,
  resolveFormat,
  type OutputFormat,
  type ServiceOptions,
} from './shared-options.js';
import { addReportOption } from './plan-options.js';
import { version } from './version.js';
import { errText } from './output.js';
import { addFleetOptions, checkFleetFlags, resolveTargetsFile, type FleetOptions } from './fleet-options.js';

export interface ApplyCommandOptions extends ServiceOptions, FleetOptions {
  readonly report?: string;
  /** Fleet: apply the targets still fresh when others of the plan went stale. */
  readonly partial?: boolean;
}

/** Flags that shape a new plan; a saved plan carries the values it was made with. */
const planShapingFlags: readonly { flags: string; flag: string }[] = [
  { flags: '--prune', flag: '--prune' },
  { flags: '--max-deletes <N>', flag: '--max-deletes' },
  { flags: '--out <PLANFILE>', flag: '--out' },
  { flags: '--detailed-exitcode', flag: '--detailed-exitcode' },
  { flags: '--rotate-passwords', flag: '--rotate-passwords' },
  { flags: '--allow-empty-prune', flag: '--allow-empty-prune' },
];

/**
 * `amsync apply PLANFILE`: Terraform's "apply exactly this saved plan, or refuse if the world
 * moved", for the remote service itself. Refuses (exit 3, nothing written) when the desired
 * file or the service changed since the plan was made, and says what changed.
 */
export function registerApplyCommand(program: Command, ctx: CommandContext): void {
  const cmd = program
    .command('apply')
    .argument('<PLANFILE>', 'a plan saved by `amsync plan --out PLANFILE`')
    .description('apply a saved plan exactly as reviewed, or refuse (exit 3, nothing written) if the desired file or the service changed since it was made');
  addFileOption(cmd, "the desired-state file (or files, or folder) where it is now, when it moved since the plan was made (default: the plan's)");
  addReportOption(addOutputOptions(addWriterOptions(addLocalStateOptions(addConnectionOptions(cmd)))));
  refuseOptions(cmd, [
    ...planShapingFlags.map(({ flags, flag }) => ({
      flags,
      message: `${flag} shapes a new plan; \`amsync apply\` applies a saved plan with the settings it was made with. Plan again: amsync plan ${flag} … --out PLANFILE`,
    })),
    {
      flags: '--approve <HASH>',
      message: '--approve is not needed: the changes a saved plan records as needing approval were approved by its review, and `amsync apply` applies them (after checking the policy gates exactly these)',
    },
  ]);
  addFleetOptions(cmd, { target: false, selector: false }).option('--partial', 'with a fleet plan: apply the targets that are still fresh when others went stale (default: refuse the whole plan, nothing written anywhere)');
  cmd.action(async (planFile: string, opts: ApplyCommandOptions) => {
    // Fleet (README, "Fleet: one access file, many services"): a saved fleet plan is applied with the targets file it was made with.
    const targetsFile = resolveTargetsFile(opts, ctx.io.env);
    checkFleetFlags(opts, targetsFile);
    if (targetsFile !== undefined) {
      const { runFleetApplyCommand } = await import('./fleet.js');
      await runFleetApplyCommand(planFile, opts, ctx, targetsFile);
      return;
    }
    if (opts.partial === true) throw new UsageError('--partial applies part of a saved fleet plan: give the targets file with --targets FILE', 'conflicting_flags');
    await runApplyCommand(planFile, opts, ctx.io).catch(async (error: unknown) => {
      // A fleet plan without --targets: say what is missing rather than "not an amsync plan".
      if (error instanceof InvalidInputError && error.code === 'plan_foreign') {
        const { isFleetPlanFile } = await import('../fleet/index.js');
        if (await isFleetPlanFile(resolve(planFile))) throw new UsageError(`${planFile} is a saved fleet plan: apply it with the targets file it was made with (--targets FILE)`, 'conflicting_flags');
      }
      throw error;
    });
  });
}

export async function runApplyCommand(planFile: string, opts: ApplyCommandOptions, io: CliIo): Promise<void> {
  const env = io.env;
  const format = resolveFormat(opts);
  // Loaded here, not at start: a cold `amsync validate` needs none of apply.
  const { readSavedPlan } = await import('../saved-plan/index.js');
  const saved = await readSavedPlan(resolve(planFile), planFile);
  try {
    await applyChecked(saved, planFile, format, opts, io);
  } catch (error) {
    // A refusal also goes to the step summary and the report: a CI run's page says why
    // nothing was applied.
    if (error instanceof SafetyError) await publishRefusal(error, saved, { env, planFile, desiredFile: describeSource(desiredSourceOf(saved, opts, env)), reportFile: opts.report });
    throw error;
  }
}

async function applyChecked(saved: SavedPlan, planFile: string, format: OutputFormat, opts: ApplyCommandOptions, io: CliIo): Promise<void> {
  const env = io.env;
  const [{ LiveOutput }, { renderReport }, { createServiceContext }] = await Promise.all([import('./live-output.js'), import('../report/index.js'), import('./service-context.js')]);
  // -f points at the file where it is now (another checkout); it must still be the same bytes.
  const source = desiredSourceOf(saved, opts, io.env);
  const desiredFile = await checkSavedPlanFiles(saved, planFile, source, version);
  // The progress of the listing and the writes, on a terminal; logs pass above it.
  const live = new LiveOutput(io, { streamResults: false, color: false });
  live.expect(saved.plan);
  const context = await createServiceContext({ ...opts, file: source.paths, recursive: source.recursive === true }, io, { logStream: live.logStream }).catch((error: unknown) => {
    live.close();
    throw error;
  });
  try {
    confirmPlanService(saved, context.settings.url);
  } catch (error) {
    context.close();
    live.close();
    throw error;
  }
  const interrupts = catchInterrupts(io.signals ?? process, (text) => live.printError(text), () => context.onWire());
  let ended: BodyEnd;
  try {
    const onLoaded = (loaded: { warnings: readonly Diagnostic[] }) => {
      for (const w of loaded.warnings) live.printError(errText(`${formatDiagnostic(w)}\n`));
    };
    const request = { saved, planFile, desiredFile, reportFile: opts.report, stop: interrupts.signal, observer: live, onResult: (r: ChangeResult) => live.onResult(r), onLoaded };
    const { loaded, outcome } = await applySaved(context, request).finally(() => live.close());
    const report = savedPlanReport(outcome, { file: desiredFile, planFile, sources: loaded.files.length > 1 });
    io.stdout.write(renderReport(report, format, { color: useColor(io.stdout, env), ...(opts.report === undefined ? {} : { reportFile: opts.report }) }));
    await publishReport(report, { env, reportFile: opts.report, now: new Date() });
    throwAfterRun(outcome, { interrupts, stateFile: context.settings.stateFile, audit: context.auditTrail(), stderr: io.stderr });
    context.logger.child({ component: 'apply' }).info({ applied: outcome.results.length, tokensWritten: outcome.tokensWritten }, 'apply complete');
  } catch (caught) {
    // A listing the interrupt cut short is the interrupt (130 / 143), not a failure of the service.
    const error = interruptedInstead(interrupts, caught);
    context.notifyFailure(error);
    ended = { error };
  } finally {
    interrupts.dispose();
    live.close();
  }
  // A key renewal the last request started is waited for: a rotated key lost fails the run
  // (after an interrupt: added to its line, the exit stays 130 / 143).
  await finishRun(context, notifyGraceMs, ended, interrupts.received !== undefined);
}

/** The desired state to apply the plan with: -f where the files are now, else the plan's own. */
function desiredSourceOf(saved: SavedPlan, opts: ApplyCommandOptions, env: Env): DesiredSource {
  return savedPlanSource(saved, opts.file === undefined ? undefined : resolveDesiredSource(opts, env), opts.recursive === true);
}
