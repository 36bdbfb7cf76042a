import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { SavedPlan } from '../saved-plan/index.js';
import { SafetyError, UsageError } from '../errors.js';
import type { Report } from '../report/index.js';
import { readBounded } from '../yaml/index.js';
import { finishRun, notifyGraceMs, throwOnAuditFailure, type BodyEnd } from '../app/index.js';
import type { CommandContext } from './command-context.js';
import { formatDiagnostic } from './format-diagnostic.js';
import { catchInterrupts, interruptedInstead, throwAfterReport } from './interrupts.js';
import { useColor, type CliIo, type Env, type OutputStream } from './io.js';
import type { ServiceContext } from './service-context.js';
import { desiredFilesOf, filesHash, type DesiredSource, type LoadedFile } from '../desired/index.js';
import {
  addConnectionOptions,
  addFileOption,
  describeSource,
  resolveDesiredSource,
  addLocalStateOptions,
  addWriterOptions,
  addOutputOptions,
  refuseOptions,
  resolveFormat,
  type OutputFormat,
  type ServiceOptions,
} from './shared-options.js';
import { addReportOption, throwOnFailures } from './sync.js';
import { version } from './version.js';
import { errText } from './output.js';
import { addFleetOptions, checkFleetFlags, resolveTargetsFile, type FleetOptions } from './fleet-options.js';
import { InvalidInputError } from '../errors.js';

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
    // Fleet (DESIGN.md §9): a saved fleet plan is applied with the targets file it was made with.
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
    if (error instanceof SafetyError) await reportRefusal(error, saved, planFile, opts, env);
    throw error;
  }
}

async function applyChecked(saved: SavedPlan, planFile: string, format: OutputFormat, opts: ApplyCommandOptions, io: CliIo): Promise<void> {
  const env = io.env;
  const [{ applySavedPlan, checkDesiredFileHash, checkSavedPlan }, { LiveOutput }, { renderReport }, { publishReport }] = await Promise.all([
    import('../sync/index.js'),
    import('./live-output.js'),
    import('./render-report.js'),
    import('./report-outputs.js'),
  ]);
  checkSavedPlan(saved, planFile, version);
  // -f points at the file where it is now (another checkout); it must still be the same bytes.
  const source = desiredSourceOf(saved, opts, io.env);
  const desiredFile = describeSource(source);
  const before = await hashIfReadable(source);
  if (before !== undefined) checkDesiredFileHash(saved, planFile, desiredFile, before.hash, before.files);

  // The progress of the listing and the writes, on a terminal; logs pass above it.
  const live = new LiveOutput(io, { streamResults: false, color: false });
  live.expect(saved.plan);
  const context = await serviceContextFor(saved, { ...opts, file: source.paths, recursive: source.recursive === true }, io, live.logStream).catch((error: unknown) => {
    live.close();
    throw error;
  });
  const interrupts = catchInterrupts(io.signals ?? process, (text) => live.printError(text), () => context.onWire());
  let ended: BodyEnd;
  try {
    const loaded = await context.loadDesired();
    for (const w of loaded.warnings) live.printError(errText(`${formatDiagnostic(w)}\n`));
    context.client(); // a missing token is a usage error, found before any request
    // So is a local path the apply will write and cannot (exit 1): the state file, lock, tokensDir, audit log, --report.
    await context.checkLocalOutputs({ writes: true, reportFile: opts.report, stepSummary: true });
    const log = context.logger.child({ component: 'apply' });
    // Opened before the first write: a log that cannot be opened stops the run here.
    const audit = saved.plan.changes.length > 0 ? context.auditTrail()?.hooks(saved.plan, 'saved-plan') : undefined;
    const outcome = await applySavedPlan({
      saved,
      planFile,
      desiredFile,
      desired: loaded.desired,
      desiredFileHash: loaded.fileHash,
      desiredFiles: loaded.files,
      // The interrupt stops the client too: writes waiting in its queue are never sent.
      service: context.service(live, undefined, interrupts.signal),
      passwordState: () => context.passwordState(),
      tokenSink: context.tokenSink(),
      onResult: (r) => {
        log.debug({ kind: r.kind, action: r.action, status: r.status }, 'change result');
        audit?.onResult(r);
        live.onResult(r);
      },
      ...(audit ? { onAttempt: audit.onAttempt } : {}),
      acquireLock: context.writerLock,
      maxInFlight: context.settings.concurrency,
      lateCreate: context.lateCreate(),
      signal: interrupts.signal,
    }).finally(() => live.close());
    context.notifyOutcome(outcome, false);
    const report: Report = {
      plan: outcome.plan,
      dryRun: false,
      results: outcome.results,
      file: desiredFile,
      command: 'apply',
      planFile,
      ...(outcome.roleNames === undefined ? {} : { roleNames: outcome.roleNames }),
      ...(loaded.files.length > 1 ? { sources: true } : {}),
      approval: outcome.approval,
    };
    io.stdout.write(renderReport(report, format, { color: useColor(io.stdout, env), ...(opts.report === undefined ? {} : { reportFile: opts.report }) }));
    await publishReport(report, { env, reportFile: opts.report, now: new Date() });
    throwAfterReport(interrupts, outcome.stateSaveError, context.settings.stateFile, outcome.results);
    throwOnAuditFailure(context.auditTrail());
    throwOnFailures(outcome.plan, outcome.results, outcome.tokenErrors, io.stderr, outcome.lockLost);
    log.info({ applied: outcome.results.length, tokensWritten: outcome.tokensWritten }, 'apply complete');
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

/**
 * The service the plan was made for, confirmed by the caller. A plan file is a CI artifact
 * (anyone who can write to the pipeline's artifacts can swap it), so the URL is never taken
 * from it alone: it must be configured (--url, AMSYNC_URL or the settings file) and be the
 * plan's, else the bearer token would go wherever the file says. A plan reviewed for staging
 * is not applied to production either. Both refusals come before any request.
 */
async function serviceContextFor(saved: SavedPlan, opts: ApplyCommandOptions, io: CliIo, logStream: OutputStream): Promise<ServiceContext> {
  // Loaded here, not at start: a cold `amsync validate` needs neither the client nor apply.
  const { createServiceContext } = await import('./service-context.js');
  const context = await createServiceContext(opts, io, { logStream });
  const configured = context.settings.url;
  if (configured === undefined) {
    context.close();
    throw new SafetyError(
      'plan_url_unconfirmed',
      `the plan was made for ${saved.serviceUrl}, and amsync apply does not take the service URL from a plan file alone; nothing was sent; set --url or AMSYNC_URL to the service it was made for`,
    );
  }
  if (!sameService(configured, saved.serviceUrl)) {
    context.close();
    throw new SafetyError(
      'plan_mismatch',
      `the plan was made for ${saved.serviceUrl}, but the service configured now is ${configured}; nothing was written; apply it to the service it was made for, or plan again`,
    );
  }
  return context;
}

/** Same scheme, host, port and path: case of the host, a default port and trailing slashes aside. */
export function sameService(a: string, b: string): boolean {
  const normal = (url: string): string | undefined => {
    try {
      const parsed = new URL(url);
      parsed.pathname = parsed.pathname.replace(/\/+$/, '');
      return parsed.href.replace(/\/+$/, '');
    } catch {
      return undefined;
    }
  };
  const left = normal(a);
  return left !== undefined && left === normal(b);
}

/** The refusal as Markdown in the step summary, and in the report file with what moved. */
async function reportRefusal(error: SafetyError, saved: SavedPlan, planFile: string, opts: ApplyCommandOptions, env: Env): Promise<void> {
  const [{ StalePlanError, renderStaleMarkdown }, { mdText }, { appendStepSummary, reportDocument, writeReportFile }] = await Promise.all([
    import('../saved-plan/index.js'),
    import('../report/index.js'),
    import('./report-outputs.js'),
  ]);
  if (error instanceof StalePlanError) await appendStepSummary(env, renderStaleMarkdown(planFile, error.staleness));
  else await appendStepSummary(env, `### amsync apply: refused\n\n${mdText(error.message)} **Nothing was written.**\n`);
  if (opts.report === undefined) return;
  const detail = error instanceof StalePlanError && error.staleness.reason === 'service' ? { serviceChanges: error.staleness.changes } : {};
  const report: Report = { plan: saved.plan, dryRun: true, file: describeSource(desiredSourceOf(saved, opts, env)), command: 'apply', planFile };
  await writeReportFile(opts.report, reportDocument(report, new Date(), { code: error.code, message: error.message, ...detail }));
}

/**
 * The desired state to apply the plan with: `-f` (where the files are now), else the plan's
 * own: the paths it was made from, with --recursive as it was.
 */
function desiredSourceOf(saved: SavedPlan, opts: ApplyCommandOptions, env: Env): DesiredSource {
  if (opts.file !== undefined) return resolveDesiredSource(opts, env);
  const sources = saved.desiredSources;
  if (sources === undefined) return { paths: [saved.desiredFile] };
  return { paths: sources.paths, ...(sources.recursive === true || opts.recursive === true ? { recursive: true } : {}) };
}

/** The hash the plan compares (of the one file, or of every file), and each file's. */
async function hashIfReadable(source: DesiredSource): Promise<{ hash: string; files: LoadedFile[] } | undefined> {
  try {
    const files: LoadedFile[] = [];
    for (const file of await desiredFilesOf(source)) files.push({ file, hash: createHash('sha256').update(await readBounded(file)).digest('hex') });
    return { hash: files.length === 1 ? files[0]!.hash : filesHash(files), files };
  } catch {
    return undefined; // loading it says why, with the desired file's own errors (exit 65)
  }
}

