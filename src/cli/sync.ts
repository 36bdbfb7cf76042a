import { dirname, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import type { SyncOutcome } from '../apply/run-sync.js';
import { AmsyncError, ChangesFailedError, exitCodes, UsageError } from '../errors.js';
import type { ChangeResult, Plan } from '../model/index.js';
import type { Report } from '../plan/index.js';
import type { CommandContext } from './commands.js';
import { formatDiagnostic } from './format-diagnostic.js';
import type { LoadedDesiredState, ServiceContext } from './service-context.js';
import { addServiceOptions, resolveFormat, type ServiceOptions } from './shared-options.js';
import { version } from './version.js';

export interface SyncCommandOptions extends ServiceOptions {
  readonly dryRun?: boolean;
  readonly rotatePasswords?: boolean;
  readonly allowEmptyPrune?: boolean;
  /** `--report FILE`: the results as JSON. */
  readonly report?: string;
}

export function registerSyncCommand(program: Command, ctx: CommandContext): void {
  const cmd = program
    .command('sync')
    .description('plan, then apply the plan (unless --dry-run)')
    .option('--dry-run', 'show the plan and change nothing (same as `amsync plan`)');
  addPlanOptions(addServiceOptions(cmd)).action(async (opts: SyncCommandOptions) => {
    await runSyncCommand(opts, Boolean(opts.dryRun), ctx);
  });
}

/** Options that shape a plan, shared by `plan` and `sync`. */
export function addPlanOptions(cmd: Command): Command {
  return addReportOption(
    cmd
      .option('--rotate-passwords', 'set every declared password, whether or not it changed')
      .option('--allow-empty-prune', 'let prune delete every item of a kind the file declares none of'),
  );
}

/** `--report FILE`, for every command that prints a report (plan, sync, apply). */
export function addReportOption(cmd: Command): Command {
  return cmd.option('--report <FILE>', 'also write the plan and per-item results as JSON to FILE (0600; the --json document plus a timestamp)');
}

/**
 * plan / sync: load and check the file (nothing is sent if it is invalid), list, plan, guard,
 * apply unless a dry-run, print the report, and turn the outcome into an exit code. With
 * `--out`, a dry-run also saves the plan for `amsync apply`.
 */
export async function runSyncCommand(opts: SyncCommandOptions, dryRun: boolean, ctx: CommandContext): Promise<void> {
  const env = process.env;
  const format = resolveFormat(opts);
  if (opts.out !== undefined && !dryRun) {
    throw new UsageError('--out saves a plan for `amsync apply` to apply later: use it with `amsync plan` or `amsync sync --dry-run`', 'conflicting_flags');
  }
  // Loaded here, not at start: a cold `amsync validate` needs none of the client, the plan or the reports.
  const [{ createServiceContext }, { renderReport }, { publishReport }] = await Promise.all([
    import('./service-context.js'),
    import('./render-report.js'),
    import('./report-outputs.js'),
  ]);
  const context = await createServiceContext(opts, env);
  try {
    const loaded = await context.loadDesired();
    for (const w of loaded.warnings) process.stderr.write(`${formatDiagnostic(w)}\n`);
    context.client(); // a missing URL or token is a usage error, found before any request
    const log = context.logger.child({ component: 'sync' });
    const outcome = await context.sync(loaded.desired, {
      dryRun,
      rotatePasswords: opts.rotatePasswords,
      pruneAll: opts.prune,
      allowEmptyPrune: opts.allowEmptyPrune,
      onResult: (r) => log.debug({ kind: r.kind, action: r.action, status: r.status }, 'change result'),
    });
    // A refused plan is not saved: `amsync apply` must never be handed a plan a guard refused.
    // Like Terraform, a plan with errors is not saved: applying "the rest" later is not what was reviewed.
    const planFile = opts.out !== undefined && !outcome.refusal && outcome.plan.problems.length === 0 ? opts.out : undefined;
    if (planFile !== undefined) await savePlan(planFile, context, loaded, outcome, opts);
    const report: Report = { plan: outcome.plan, dryRun: dryRun || outcome.refusal !== undefined, results: outcome.results, file: context.file, planFile };
    process.stdout.write(renderReport(report, format, env));
    await publishReport(report, { env, reportFile: opts.report, now: new Date(), refusal: outcome.refusal });
    if (planFile !== undefined) process.stderr.write(`Saved the plan to ${planFile}. To apply exactly these changes: amsync apply ${planFile}\n`);

    if (outcome.refusal) {
      if (opts.out !== undefined) process.stderr.write(`No plan was saved to ${opts.out}: the plan was refused.\n`);
      throw outcome.refusal;
    }
    if (opts.out !== undefined && planFile === undefined) process.stderr.write(`No plan was saved to ${opts.out}: some declared items could not be planned.\n`);
    throwOnFailures(outcome.plan, outcome.results);
    if (outcome.results) log.info({ applied: outcome.results.length, tokensWritten: outcome.tokensWritten }, 'sync complete');
    if (dryRun && opts.detailedExitcode && outcome.plan.changes.length > 0) ctx.setExitCode(exitCodes.changesPending);
  } finally {
    context.close();
  }
}

/**
 * Exit 1 when declared items could not be planned or changes did not apply (the others did):
 * the same rule for `sync` and `amsync apply`.
 */
export function throwOnFailures(plan: Plan, results: readonly ChangeResult[] | undefined): void {
  const failed = results?.filter((r) => r.status !== 'applied').length ?? 0;
  if (plan.problems.length > 0) {
    throw new AmsyncError('plan_problems', `${plan.problems.length} declared item${plan.problems.length === 1 ? '' : 's'} could not be planned (see above)${failed > 0 ? `, and ${failed} change${failed === 1 ? '' : 's'} did not apply` : ''}`);
  }
  if (failed > 0) {
    const applied = results!.length - failed;
    throw new ChangesFailedError(failed, `${failed} of ${results!.length} changes did not apply (see above)${applied > 0 ? `; ${applied} did` : ''}`);
  }
}

/** `--out`: the plan, what it was made from, and the settings that shaped it; no secret. */
async function savePlan(planFile: string, context: ServiceContext, loaded: LoadedDesiredState, outcome: SyncOutcome, opts: SyncCommandOptions): Promise<void> {
  const [{ writeSavedPlan }, { passwordReferences, toSavedPlan }] = await Promise.all([import('../apply/saved-plan-file.js'), import('../plan/index.js')]);
  const desiredDir = dirname(resolve(context.file));
  const saved = toSavedPlan({
    amsyncVersion: version,
    createdAt: new Date().toISOString(),
    desiredFile: context.file,
    desiredFileHash: loaded.fileHash,
    serviceUrl: context.settings.url!,
    settings: {
      prune: outcome.policy.prune,
      rotatePasswords: opts.rotatePasswords === true,
      passwordMode: outcome.policy.passwords.mode,
      allowEmptyPrune: opts.allowEmptyPrune === true,
      maxDeletes: context.settings.maxDeletes,
    },
    actualFingerprint: outcome.actualFingerprint,
    plan: outcome.plan,
    passwords: passwordReferences(outcome.plan, loaded.desired, (abs) => relative(desiredDir, abs).split('\\').join('/')),
    actual: outcome.actual,
  });
  try {
    await writeSavedPlan(resolve(planFile), saved);
  } catch (error) {
    throw new AmsyncError('plan_unwritable', `cannot write the plan file ${planFile}: ${(error as NodeJS.ErrnoException).code ?? 'write error'}`, { cause: error });
  }
}
