import type { Command } from 'commander';
import type { ApprovalAnswer, SyncOutcome } from '../sync/index.js';
import { changesToWrite, matchApprovals, pendingGates } from '../policy/index.js';
import { exitCodes, UsageError } from '../errors.js';
import { formatDiagnostic, type ApprovalStatus, type Plan } from '../model/index.js';
import { checkSecretsMode, finishRun, interruptedAtPrompt, interruptedInstead, planAndApply, planFileFor, publishReport, savePlan, syncReport, throwAfterRun, throwIfWithheld, notifyGraceMs, type BodyEnd } from '../app/index.js';
import { withSelection } from './selection-flags.js';
import { annotateDiagnostics, annotatePlan } from './annotations.js';
import type { CommandContext } from './command-context.js';
import { catchInterrupts, type Interrupts } from './interrupts.js';
import type { LiveOutput } from './live-output.js';
import type * as ReportModule from '../report/index.js';
import { isInteractive, useColor } from './io.js';
import { errText } from './output.js';
import type { LoadedDesiredState, ServiceContext } from './service-context.js';
import { addWriterOptions, resolveFormat, type OutputFormat } from './shared-options.js';
import { addPlanCommandOptions, collectApproval, type SyncCommandOptions } from './plan-options.js';
import { version } from './version.js';
import { checkFleetFlags, resolveTargetsFile } from './fleet-options.js';

export function registerSyncCommand(program: Command, ctx: CommandContext): void {
  const cmd = program
    .command('sync')
    .description('plan, then apply the plan (unless --dry-run); at a terminal, asks before writing')
    .option('--dry-run', 'show the plan and change nothing (same as `amsync plan`)')
    .option('--auto-approve', 'apply without asking for approval at a terminal (elsewhere, as in CI, sync never asks); never approves a change the policy gates: that takes --approve')
    .option(
      '--approve <HASH>',
      "approve a change the policy gates (superuser, approveRoles, approveDeletesOver): its approval hash from the plan, or the plan's hash of the whole set; repeatable. Without it such changes are not written and sync exits 3 after applying the rest",
      collectApproval,
    );
  addPlanCommandOptions(addWriterOptions(cmd)).action(async (opts: SyncCommandOptions) => {
    await runSyncCommand(opts, Boolean(opts.dryRun), ctx);
  });
}

/**
 * plan / sync: load and check the file (nothing is sent if it is invalid), list, plan, guard,
 * show the plan, ask at a terminal, apply unless a dry-run (each result printed as it is
 * known), and turn the outcome into an exit code. With `--out`, a dry-run also saves the
 * plan for `amsync apply`.
 */
export async function runSyncCommand(opts: SyncCommandOptions, dryRun: boolean, ctx: CommandContext): Promise<void> {
  const { io } = ctx;
  // Fleet (README, "Fleet: one access file, many services"): --targets FILE (or AMSYNC_TARGETS) runs on every service it lists.
  const targetsFile = resolveTargetsFile(opts, io.env);
  checkFleetFlags(opts, targetsFile);
  checkSecretsMode(opts.secrets, { dryRun, fleet: targetsFile !== undefined });
  const format = resolveFormat(opts);
  const ask = !dryRun && opts.autoApprove !== true && isInteractive(io);
  checkSyncFlags(opts, dryRun, format, ask, targetsFile !== undefined);
  if (targetsFile !== undefined) {
    const { runFleetSyncCommand } = await import('./fleet.js');
    await runFleetSyncCommand(opts, dryRun, ctx, targetsFile);
    return;
  }
  const color = useColor(io.stdout, io.env);
  // Loaded here, not at start: a cold `amsync validate` needs neither the client, apply, the
  // reports nor the progress line.
  const [{ createServiceContext }, { LiveOutput }, reports] = await Promise.all([import('./service-context.js'), import('./live-output.js'), import('../report/index.js')]);
  const live = new LiveOutput(io, { streamResults: format === 'text' && !dryRun, color });
  const context = await createServiceContext(opts, io, { logStream: live.logStream }).catch((error: unknown) => {
    live.close();
    throw error;
  });
  // A dry-run writes nothing: Ctrl-C simply ends it. A sync sends nothing more, lets what is
  // on the wire finish, and reports.
  const interrupts = dryRun ? undefined : catchInterrupts(io.signals ?? process, (text) => live.printError(text), () => context.onWire());
  const run: SyncRun = { opts, dryRun, ctx, format, ask, color, live, context, interrupts, reports };
  let ended: BodyEnd;
  try {
    await syncAndReport(run);
  } catch (caught) {
    // A listing the interrupt cut short is the interrupt (130 / 143), not a failure of the service.
    const error = interruptedInstead(interrupts, caught);
    context.notifyFailure(error);
    ended = { error };
  } finally {
    interrupts?.dispose();
    live.close();
  }
  // Queued notifications get a bounded moment to go out: a dead receiver delays the exit by
  // at most this, and never changes its code.
  // A key renewal the last request started is waited for: a rotated key lost fails the run
  // (after an interrupt: added to its line, the exit stays 130 / 143).
  await finishRun(context, notifyGraceMs, ended, interrupts?.received !== undefined);
}

/** Flags that contradict each other or the terminal: exit 64 before anything is read. */
function checkSyncFlags(opts: SyncCommandOptions, dryRun: boolean, format: OutputFormat, ask: boolean, fleet: boolean): void {
  if (opts.out !== undefined && !dryRun) {
    throw new UsageError('--out saves a plan for `amsync apply` to apply later: use it with `amsync plan` or `amsync sync --dry-run`', 'conflicting_flags');
  }
  if (ask && fleet) {
    // One question for a whole fleet would have to wait for every target's plan; a reviewed
    // saved plan is the way to look before writing.
    throw new UsageError('a fleet sync does not ask for approval: add --auto-approve, or plan first (amsync plan --targets FILE --out plan.json) and apply that plan (amsync apply plan.json --targets FILE)', 'approval_needed');
  }
  if (ask && format !== 'text') {
    // As terraform apply -json: one document cannot hold a question and its answer.
    throw new UsageError(`amsync cannot ask for approval while printing ${format === 'json' ? 'one JSON document' : 'Markdown'}: add --auto-approve, or plan first (amsync plan --out plan.json) and apply that plan (amsync apply plan.json)`, 'approval_needed');
  }
}

/** One plan or sync of one service, with what it was given and what it loaded lazily. */
interface SyncRun {
  readonly opts: SyncCommandOptions;
  readonly dryRun: boolean;
  readonly ctx: CommandContext;
  readonly format: OutputFormat;
  /** At a terminal, without --auto-approve: the plan is shown and the user asked. */
  readonly ask: boolean;
  readonly color: boolean;
  readonly live: LiveOutput;
  readonly context: ServiceContext;
  readonly interrupts: Interrupts | undefined;
  readonly reports: Pick<typeof ReportModule, 'applySummary' | 'renderPlanText' | 'renderReport'>;
}

async function syncAndReport(run: SyncRun): Promise<void> {
  const { opts, dryRun, ctx, live, context, interrupts } = run;
  const io = ctx.io;
  const shown = { plan: false };
  let sources = false;
  const { loaded, outcome } = await planAndApply(context, {
    dryRun,
    rotatePasswords: opts.rotatePasswords,
    prune: opts.prune,
    allowEmptyPrune: opts.allowEmptyPrune,
    deleteDuplicateApikeys: opts.deleteDuplicateApikeys,
    ...withSelection(opts),
    approvals: opts.approve ?? [],
    reportFile: opts.report,
    planFile: opts.out,
    ...(opts.secrets === undefined ? {} : { secrets: opts.secrets }),
    ...(interrupts ? { stopWrites: interrupts.signal } : {}),
    observer: live,
    onResult: (r) => live.onResult(r),
    onLoaded: (loaded) => {
      for (const w of loaded.warnings) live.printError(errText(`${formatDiagnostic(w)}\n`));
      annotateDiagnostics(io, loaded.warnings);
      sources = loaded.files.length > 1;
    },
    beforeApply: (plan, roleNames, approval) => showAndAsk(run, { plan, roleNames, approval, sources, shown }),
  });
  live.close();
  annotatePlan(io, outcome.plan);
  if (outcome.cancelled) {
    io.stdout.write('Apply cancelled.\n');
    if (interrupts?.received) throw interruptedAtPrompt(interrupts.received);
    ctx.setExitCode(exitCodes.failure);
    return;
  }
  await reportOutcome(run, loaded, outcome, { shown: shown.plan, sources });
  if (outcome.results) context.logger.child({ component: 'sync' }).info({ applied: outcome.results.length, tokensWritten: outcome.tokensWritten }, 'sync complete');
  if (!dryRun && outcome.approval) throwIfWithheld(outcome.plan, outcome.approval);
  if (dryRun && opts.detailedExitcode && outcome.plan.changes.length > 0) ctx.setExitCode(exitCodes.changesPending);
}

/**
 * Before anything is written: the plan on a terminal, the question (a typed hash for changes
 * the policy gates), and the progress of what will be written (gated changes not approved stay out).
 */
async function showAndAsk(
  run: SyncRun,
  at: { plan: Plan; roleNames: ReadonlyMap<number, string> | undefined; approval: ApprovalStatus; sources: boolean; shown: { plan: boolean } },
): Promise<boolean | ApprovalAnswer> {
  const { live, format, ask, interrupts, context, color } = run;
  const { plan, roleNames, approval } = at;
  live.pause();
  if (format === 'text') {
    live.print(run.reports.renderPlanText({ plan, dryRun: false, file: context.file, ...(roleNames === undefined ? {} : { roleNames }), sources: at.sources, approval }, { color }));
    at.shown.plan = true;
  }
  const pending = pendingGates(approval);
  let answer: boolean | ApprovalAnswer = true;
  if (plan.changes.length > 0 && ask) {
    const { askApproval, askApprovalOfGated } = await import('./confirm.js');
    answer = pending.length === 0 ? await askApproval(run.ctx.io, interrupts?.signal) : await askApprovalOfGated(run.ctx.io, approval, plan.changes.length, interrupts?.signal);
  }
  if (answer === false) return false;
  live.startApply({ ...plan, changes: changesToWrite(plan, approval, answer === true ? [] : answer.approve) });
  return answer;
}

/** The report, the saved plan, and the exit: refused (3), interrupted, failed (1). */
async function reportOutcome(run: SyncRun, loaded: LoadedDesiredState, outcome: SyncOutcome, how: { shown: boolean; sources: boolean }): Promise<void> {
  const { opts, dryRun, context, interrupts, format, color } = run;
  const io = run.ctx.io;
  const planFile = planFileFor(outcome, opts.out);
  if (planFile !== undefined) await savePlan(planFile, context, loaded, outcome, { ...opts, ...withSelection(opts) }, version);
  const report = syncReport(outcome, { dryRun, file: context.file, planFile, sources: how.sources });
  // The plan and each result are out already; what is left is the apply's summary line.
  if (how.shown) io.stdout.write(outcome.results && outcome.results.length > 0 ? run.reports.applySummary(outcome.results) : '');
  else io.stdout.write(run.reports.renderReport(report, format, { color, ...(opts.report === undefined ? {} : { reportFile: opts.report }) }));
  await publishReport(report, { env: io.env, reportFile: opts.report, now: new Date(), refusal: outcome.refusal });
  if (planFile !== undefined) io.stderr.write(`Saved the plan to ${planFile}. To apply exactly these changes: amsync apply ${planFile}\n`);
  if (outcome.refusal) {
    if (opts.out !== undefined) io.stderr.write(`No plan was saved to ${opts.out}: the plan was refused.\n`);
    throw outcome.refusal;
  }
  if (opts.out !== undefined && planFile === undefined) io.stderr.write(`No plan was saved to ${opts.out}: some declared items could not be planned.\n`);
  const unmatched = outcome.approval ? matchApprovals(outcome.approval.review, opts.approve ?? []).unmatched : [];
  const notes = unmatched.map((hash) => `note: --approve ${hash} matches no change of this plan that needs approval (a stale or mistyped hash?)\n`);
  throwAfterRun(outcome, { interrupts, stateFile: context.settings.stateFile, audit: context.auditTrail(), stderr: io.stderr, notes });
}

