import { UsageError } from '../errors.js';
import { checkSinkNames } from '../secrets/index.js';
import type { ChangeResult, DesiredState } from '../model/index.js';
import { replaceWord, type SelectionFlags } from '../plan/index.js';
import type { SyncOutcome } from '../sync/index.js';
import type { LoadedDesiredState, ServiceContext, SyncOptions } from './app-context.js';
import type { ServiceObserver } from './observed-service.js';
import type { PlanShape } from './save-plan.js';
import type { SecretsMode } from './secrets-mode.js';

export interface PlanAndApplyRequest extends PlanShape {
  readonly dryRun: boolean;
  /** `--prune`: prune both kinds, whatever the file says. */
  readonly prune?: boolean;
  /** `--approve`: hashes that approve gated changes. */
  readonly approvals: readonly string[];
  /** `--report FILE` and `--out PLANFILE`: checked to be writable before anything is sent. */
  readonly reportFile?: string | undefined;
  readonly planFile?: string | undefined;
  /** An interrupt: nothing more is sent once it fires. */
  readonly stopWrites?: AbortSignal;
  readonly observer?: ServiceObserver;
  readonly onResult?: (result: ChangeResult) => void;
  /** Shown the plan before anything is written; false cancels. */
  readonly beforeApply?: SyncOptions['beforeApply'];
  /** The desired state as read, before anything is sent (its warnings are shown then). */
  readonly onLoaded?: (loaded: LoadedDesiredState) => void;
  /**
   * `--secrets optional` (a dry-run only: checkSecretsMode): plan without the passwords that
   * cannot be read here. @default 'required'
   */
  readonly secrets?: SecretsMode;
}

/**
 * plan / sync of one service: the file read and checked (nothing is sent if it is invalid), the
 * client and every local path the run writes checked, then list, plan, guard and apply unless
 * a dry-run; the outcome told to the webhooks. What the outcome means for the exit is
 * exit-policy's; saving the plan is savePlan's.
 */
export async function planAndApply(context: ServiceContext, request: PlanAndApplyRequest): Promise<{ loaded: LoadedDesiredState; outcome: SyncOutcome }> {
  const { dryRun } = request;
  // Never for a run that writes, whatever the caller passed: a sync needs every password.
  const loaded = await context.loadDesired(dryRun && request.secrets === 'optional' ? { secrets: 'optional' } : undefined);
  request.onLoaded?.(loaded);
  checkReplaceSink(request.selection, context.settings.tokensDir ?? context.settings.kubernetesSecret);
  if (!dryRun) checkGeneratedPasswordSink(loaded.desired, context.settings.tokensDir ?? context.settings.kubernetesSecret);
  // Bad input before a local path that cannot be written (runSync checks it again, for the daemon and a fleet).
  checkSinkNames(loaded.desired, context.tokenSink());
  context.client(); // a missing URL or token is a usage error, found before any request
  // So is a local path this run will write and cannot (exit 1): the state file, lock, tokensDir, audit log, --out, --report.
  await context.checkLocalOutputs({ writes: !dryRun, reportFile: request.reportFile, planFile: request.planFile, stepSummary: true });
  const log = context.logger.child({ component: 'sync' });
  const outcome = await context.sync(loaded.desired, {
    ...planChoices(request),
    approvals: request.approvals,
    ...(request.stopWrites ? { stopWrites: request.stopWrites } : {}),
    ...(request.observer ? { observer: request.observer } : {}),
    onResult: (r) => {
      log.debug({ kind: r.kind, action: r.action, status: r.status }, 'change result');
      request.onResult?.(r);
    },
    ...(request.beforeApply ? { beforeApply: request.beforeApply } : {}),
  });
  context.notifyOutcome(outcome, dryRun);
  return { loaded, outcome };
}

/**
 * `--replace apikey:…` issues a new token: without a token sink it would go nowhere and the
 * old key, the one in use, would be deleted. Refused before any request (exit 64), dry-run
 * too: the plan shown is the plan that would be applied.
 */
export function checkReplaceSink(selection: SelectionFlags | undefined, tokensDir: string | undefined): void {
  const key = selection?.replace.find((a) => a.startsWith('apikey'));
  if (key === undefined || tokensDir !== undefined) return;
  throw new UsageError(`${replaceWord(selection)} ${key} issues a new apikey token, which needs a token sink: set tokensDir (--tokens-dir DIR or AMSYNC_TOKENS_DIR)`, 'replace_without_sink');
}

/**
 * A generated password (`password: {generate}`) is written to the password sink, inside
 * tokensDir or the kubernetesSecret (`sink`: whichever is set): a run that may generate one
 * without it would set passwords nobody could read. Refused before any request (exit 64),
 * naming the first such user; a dry-run shows its plan.
 */
export function checkGeneratedPasswordSink(desired: DesiredState, sink: string | undefined): void {
  if (sink !== undefined) return;
  const user = desired.sshUsers.find((u) => u.ensure === 'present' && u.passwordGenerated !== undefined);
  if (user === undefined) return;
  const at = user.source ? `${user.source.file}:${user.source.line}:${user.source.col}: ` : '';
  throw new UsageError(`${at}SSH user "${user.username}" has a generated password, which is written to the password sink (tokensDir/passwords~/<username>): set tokensDir (--tokens-dir DIR or AMSYNC_TOKENS_DIR), or kubernetesSecret (--kubernetes-secret NAMESPACE/NAME or AMSYNC_KUBERNETES_SECRET)`, 'generated_without_sink');
}

/**
 * The plan file an outcome is saved to, if any: a refused plan is not saved (`amsync apply`
 * must never be handed a plan a guard refused), nor, like Terraform, a plan with errors
 * (applying "the rest" later is not what was reviewed).
 */
export function planFileFor(outcome: Pick<SyncOutcome, 'refusal' | 'plan'>, out: string | undefined): string | undefined {
  return out !== undefined && !outcome.refusal && outcome.plan.problems.length === 0 ? out : undefined;
}

/** The choices of one plan, as `plan` and `sync` take them from their flags (one service, or each target of a fleet). */
export interface PlanChoices {
  readonly dryRun: boolean;
  readonly rotatePasswords?: boolean | undefined;
  /** `--prune`: prune both kinds, whatever the file says. */
  readonly prune?: boolean | undefined;
  readonly allowEmptyPrune?: boolean | undefined;
  readonly deleteDuplicateApikeys?: boolean | undefined;
  /** `--only`, `--exclude`, `--replace`. */
  readonly selection?: SelectionFlags | undefined;
}

/** The sync options those choices are (the same for one service and for each target of a fleet). */
export function planChoices(request: PlanChoices): Pick<SyncOptions, 'dryRun' | 'rotatePasswords' | 'pruneAll' | 'allowEmptyPrune' | 'deleteDuplicateApikeys' | 'selection'> {
  return {
    dryRun: request.dryRun,
    rotatePasswords: request.rotatePasswords,
    pruneAll: request.prune,
    allowEmptyPrune: request.allowEmptyPrune,
    deleteDuplicateApikeys: request.deleteDuplicateApikeys,
    ...(request.selection === undefined ? {} : { selection: request.selection }),
  };
}
