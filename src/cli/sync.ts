import { Option, type Command } from 'commander';
import type { ApprovalAnswer, SyncOutcome } from '../sync/index.js';
import { approvalHashLength, changesToWrite, matchApprovals, normaliseApproval, pendingGates } from '../policy/index.js';
import { badFlag } from '../settings/index.js';
import { exitCodes, UsageError } from '../errors.js';
import { formatDiagnostic, type ApprovalStatus, type Plan } from '../model/index.js';
import { checkSecretsMode, finishRun, interruptedAtPrompt, interruptedInstead, throwAfterReport, planAndApply, planFileFor, publishReport, savePlan, syncReport, throwIfWithheld, throwOnAuditFailure, throwOnFailures, notifyGraceMs, secretsModes, type BodyEnd, type SecretsMode } from '../app/index.js';
import type { SelectionFlags } from '../plan/index.js';
import { selectionFlags } from './selection-flags.js';
import { itemAddressProblem } from '../apply/index.js';
import { annotateDiagnostics, annotatePlan } from './annotations.js';
import type { CommandContext } from './command-context.js';
import { catchInterrupts, type Interrupts } from './interrupts.js';
import type { LiveOutput } from './live-output.js';
import type * as ReportModule from '../report/index.js';
import { isInteractive, useColor } from './io.js';
import { errText } from './output.js';
import type { LoadedDesiredState, ServiceContext } from './service-context.js';
import {
  addConnectionOptions,
  addDeleteOptions,
  addFileOption,
  addLocalStateOptions,
  addWriterOptions,
  addOutputOptions,
  addPlanOutputOptions,
  resolveFormat,
  type OutputFormat,
  type ServiceOptions,
} from './shared-options.js';
import { version } from './version.js';
import { addFleetOptions, checkFleetFlags, resolveTargetsFile, type FleetOptions } from './fleet-options.js';

export interface SyncCommandOptions extends ServiceOptions, FleetOptions {
  readonly dryRun?: boolean;
  readonly rotatePasswords?: boolean;
  readonly allowEmptyPrune?: boolean;
  readonly deleteDuplicateApikeys?: boolean;
  /** `--report FILE`: the results as JSON. */
  readonly report?: string;
  /** `--auto-approve`: apply without asking at a terminal. */
  readonly autoApprove?: boolean;
  /** `--approve HASH`, repeatable: approves gated changes (a change's hash, or the whole set's). */
  readonly approve?: readonly string[];
  /** `--secrets required|optional`. */
  readonly secrets?: SecretsMode;
  /** `--only`, `--exclude`, `--replace ADDR`, repeatable (issue 29). */
  readonly only?: readonly string[];
  readonly exclude?: readonly string[];
  readonly replace?: readonly string[];
}

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

/** The options of `plan`, and of `sync` besides its own. */
export function addPlanCommandOptions(cmd: Command): Command {
  addPlanOutputOptions(addDeleteOptions(addOutputOptions(addLocalStateOptions(addConnectionOptions(addFileOption(cmd))))));
  addFleetOptions(cmd);
  return addReportOption(
    cmd
      .option('--rotate-passwords', 'set every declared password, whether or not it changed')
      .option('--allow-empty-prune', 'let prune delete every item of a kind the file declares none of')
      .option('--delete-duplicate-apikeys', 'of remote apikeys sharing a declared name, keep the pinned one (else the oldest) and delete the rest, within --max-deletes')
      .addOption(
        new Option(
          '--secrets <MODE>',
          'required (default): a password secret that cannot be read is an error (exit 65); optional: plan without it (creates show it as not available, its drift is not checked); plan and sync --dry-run only',
        ).argParser(parseSecretsMode),
      )
      .option('--only <ADDR>', 'plan and change only these items (prune included): KIND:NAME-GLOB or KIND#ID, KIND sshUser or apikey; repeatable', collectAddress('--only'))
      .option('--exclude <ADDR>', 'leave these items out of the plan (KIND:NAME-GLOB or KIND#ID); repeatable', collectAddress('--exclude'))
      .option(
        '--replace <ADDR>',
        "issue a declared item's secret again: an SSH user's password is sent again; an apikey gets a successor whose token is written to tokensDir before the old key is deleted; repeatable",
        collectAddress('--replace'),
      ),
  );
}

function parseSecretsMode(value: string): SecretsMode {
  const mode = secretsModes.find((m) => m === value);
  if (mode === undefined) throw badFlag('--secrets', '`required` or `optional`', value);
  return mode;
}

/** Commander's parser for a repeatable item address; a malformed one is exit 64 naming the flag. */
function collectAddress(flag: string): (value: string, previous: readonly string[] | undefined) => string[] {
  return (value, previous) => {
    const problem = itemAddressProblem(value);
    if (problem !== undefined) throw badFlag(flag, problem, value);
    return [...(previous ?? []), value];
  };
}

function withSelection(opts: SyncCommandOptions): { selection?: SelectionFlags } {
  const selection = selectionFlags(opts);
  return selection === undefined ? {} : { selection };
}

/** Commander's parser for a repeatable --approve; a value that is not a hash is exit 64. */
export function collectApproval(value: string, previous: readonly string[] | undefined): string[] {
  if (normaliseApproval(value) === undefined) throw badFlag('--approve', `an approval hash (${approvalHashLength} hex digits, as the plan prints it)`, value);
  return [...(previous ?? []), value];
}

/** `--report FILE`, for every command that prints a report (plan, sync, apply). */
export function addReportOption(cmd: Command): Command {
  return cmd.option('--report <FILE>', 'also write the plan and per-item results as JSON to FILE (0600; the --json document plus a timestamp)');
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
  if (targetsFile !== undefined) {
    const { runFleetSyncCommand } = await import('./fleet.js');
    await runFleetSyncCommand(opts, dryRun, ctx, targetsFile);
    return;
  }
  const format = resolveFormat(opts);
  const ask = !dryRun && opts.autoApprove !== true && isInteractive(io);
  checkSyncFlags(opts, dryRun, format, ask);
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
function checkSyncFlags(opts: SyncCommandOptions, dryRun: boolean, format: OutputFormat, ask: boolean): void {
  if (opts.out !== undefined && !dryRun) {
    throw new UsageError('--out saves a plan for `amsync apply` to apply later: use it with `amsync plan` or `amsync sync --dry-run`', 'conflicting_flags');
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
  if (interrupts) throwAfterReport(interrupts, outcome.stateSaveError, context.settings.stateFile, outcome.results);
  throwOnAuditFailure(context.auditTrail());
  const unmatched = outcome.approval ? matchApprovals(outcome.approval.review, opts.approve ?? []).unmatched : [];
  for (const hash of unmatched) io.stderr.write(`note: --approve ${hash} matches no change of this plan that needs approval (a stale or mistyped hash?)\n`);
  throwOnFailures(outcome.plan, outcome.results, outcome.tokenErrors, io.stderr, outcome.lockLost);
}

