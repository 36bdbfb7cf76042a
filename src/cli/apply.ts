import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { SafetyError, UsageError } from '../errors.js';
import type { Report, SavedPlan } from '../plan/index.js';
import type { CommandContext } from './commands.js';
import { formatDiagnostic } from './format-diagnostic.js';
import type { ServiceContext } from './service-context.js';
import { addServiceOptions, resolveFormat, type OutputFormat, type ServiceOptions } from './shared-options.js';
import { addReportOption, throwOnFailures } from './sync.js';
import { version } from './version.js';

/** What the command needs when it runs, loaded then: a cold `amsync validate` loads none of it. */
async function runtime() {
  const [applied, planFile, stale, plan, load, render, outputs, context] = await Promise.all([
    import('../apply/apply-saved-plan.js'),
    import('../apply/saved-plan-file.js'),
    import('../apply/stale-plan-error.js'),
    import('../plan/index.js'),
    import('../spec/load.js'),
    import('./render-report.js'),
    import('./report-outputs.js'),
    import('./service-context.js'),
  ]);
  return { ...applied, ...planFile, ...stale, ...plan, ...load, ...render, ...outputs, ...context };
}

type Env = Readonly<Record<string, string | undefined>>;

export interface ApplyCommandOptions extends ServiceOptions {
  readonly report?: string;
}

/** Flags that shape a new plan; a saved plan carries the values it was made with. */
const planShapingFlags: readonly { key: keyof ApplyCommandOptions; flag: string }[] = [
  { key: 'prune', flag: '--prune' },
  { key: 'maxDeletes', flag: '--max-deletes' },
  { key: 'out', flag: '--out' },
  { key: 'detailedExitcode', flag: '--detailed-exitcode' },
];

/**
 * `amsync apply PLANFILE`: Terraform's "apply exactly this saved plan, or refuse if the world
 * moved", for the remote service itself. Refuses (exit 3, nothing written) when the desired
 * file or the service changed since the plan was made, and says what changed.
 */
export function registerApplyCommand(program: Command, _ctx: CommandContext): void {
  const cmd = program
    .command('apply')
    .argument('<PLANFILE>', 'a plan saved by `amsync plan --out PLANFILE`')
    .description('apply a saved plan exactly as reviewed, or refuse (exit 3, nothing written) if the desired file or the service changed since it was made');
  addReportOption(addServiceOptions(cmd)).action(async (planFile: string, opts: ApplyCommandOptions) => {
    await runApplyCommand(planFile, opts, process.env);
  });
}

export async function runApplyCommand(planFile: string, opts: ApplyCommandOptions, env: Env): Promise<void> {
  for (const { key, flag } of planShapingFlags) {
    if (opts[key] !== undefined && opts[key] !== false) {
      throw new UsageError(`${flag} shapes a new plan; \`amsync apply\` applies a saved plan with the settings it was made with. Plan again: amsync plan ${flag} … --out ${planFile}`, 'conflicting_flags');
    }
  }
  const format = resolveFormat(opts);
  const { readSavedPlan } = await runtime();
  const saved = await readSavedPlan(resolve(planFile), planFile);
  try {
    await applyChecked(saved, planFile, format, opts, env);
  } catch (error) {
    // A refusal also goes to the step summary and the report: a CI run's page says why
    // nothing was applied.
    if (error instanceof SafetyError) await reportRefusal(error, saved, planFile, opts, env);
    throw error;
  }
}

async function applyChecked(saved: SavedPlan, planFile: string, format: OutputFormat, opts: ApplyCommandOptions, env: Env): Promise<void> {
  const { applySavedPlan, checkDesiredFileHash, checkSavedPlan, publishReport, renderReport } = await runtime();
  checkSavedPlan(saved, planFile, version);
  // -f points at the file where it is now (another checkout); it must still be the same bytes.
  const desiredFile = opts.file ?? saved.desiredFile;
  const before = await hashIfReadable(desiredFile);
  if (before !== undefined) checkDesiredFileHash(saved, planFile, desiredFile, before);

  const context = await serviceContextFor(saved, { ...opts, file: desiredFile }, env);
  try {
    const loaded = await context.loadDesired();
    for (const w of loaded.warnings) process.stderr.write(`${formatDiagnostic(w)}\n`);
    context.client(); // a missing token is a usage error, found before any request
    const log = context.logger.child({ component: 'apply' });
    const outcome = await applySavedPlan({
      saved,
      planFile,
      desiredFile,
      desired: loaded.desired,
      desiredFileHash: loaded.fileHash,
      service: context.service(),
      passwordState: await context.passwordState(),
      tokenSink: context.tokenSink(),
      onResult: (r) => log.debug({ kind: r.kind, action: r.action, status: r.status }, 'change result'),
    });
    const report: Report = { plan: outcome.plan, dryRun: false, results: outcome.results, file: desiredFile, command: 'apply', planFile };
    process.stdout.write(renderReport(report, format, env));
    await publishReport(report, { env, reportFile: opts.report, now: new Date() });
    throwOnFailures(outcome.plan, outcome.results);
    log.info({ applied: outcome.results.length, tokensWritten: outcome.tokensWritten }, 'apply complete');
  } finally {
    context.close();
  }
}

/**
 * The service the plan was made for: the plan's URL unless one is configured, and a
 * configured one must be the same (a plan reviewed for staging is not applied to production).
 */
async function serviceContextFor(saved: SavedPlan, opts: ApplyCommandOptions, env: Env): Promise<ServiceContext> {
  const { createServiceContext } = await runtime();
  const context = await createServiceContext(opts, env);
  const configured = context.settings.url;
  if (configured === undefined) {
    context.close();
    return createServiceContext({ ...opts, url: saved.serviceUrl }, env);
  }
  if (trimSlashes(configured) !== trimSlashes(saved.serviceUrl)) {
    context.close();
    throw new SafetyError(
      'plan_mismatch',
      `the plan was made for ${saved.serviceUrl}, but the service configured now is ${configured}; nothing was written; apply it to the service it was made for, or plan again`,
    );
  }
  return context;
}

/** The refusal as Markdown in the step summary, and in the report file with what moved. */
async function reportRefusal(error: SafetyError, saved: SavedPlan, planFile: string, opts: ApplyCommandOptions, env: Env): Promise<void> {
  const { appendStepSummary, mdText, renderStaleMarkdown, reportDocument, StalePlanError, writeReportFile } = await runtime();
  if (error instanceof StalePlanError) await appendStepSummary(env, renderStaleMarkdown(planFile, error.staleness));
  else await appendStepSummary(env, `### amsync apply: refused\n\n${mdText(error.message)} **Nothing was written.**\n`);
  if (opts.report === undefined) return;
  const detail = error instanceof StalePlanError && error.staleness.reason === 'service' ? { serviceChanges: error.staleness.changes } : {};
  const report: Report = { plan: saved.plan, dryRun: true, file: opts.file ?? saved.desiredFile, command: 'apply', planFile };
  await writeReportFile(opts.report, reportDocument(report, new Date(), { code: error.code, message: error.message, ...detail }));
}

async function hashIfReadable(path: string): Promise<string | undefined> {
  const { readBounded } = await runtime();
  try {
    return createHash('sha256').update(await readBounded(path)).digest('hex');
  } catch {
    return undefined; // loading it says why, with the desired file's own errors (exit 65)
  }
}

function trimSlashes(url: string): string {
  return url.replace(/\/+$/, '');
}
