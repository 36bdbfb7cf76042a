import { createHash } from 'node:crypto';
import { desiredFilesOf, filesHash, type DesiredSource, type LoadedFile } from '../desired/index.js';
import { describeSource } from '../settings/index.js';
import { SafetyError } from '../errors.js';
import { checkSinkNames } from '../secrets/index.js';
import type { ChangeResult } from '../model/index.js';
import type { SavedPlan } from '../saved-plan/index.js';
import { applySavedPlan, checkDesiredFileHash, checkSavedPlan, type ApplySavedOutcome } from '../sync/index.js';
import { readBounded } from '../yaml/index.js';
import type { LoadedDesiredState, ServiceContext } from './app-context.js';
import type { ServiceObserver } from './observed-service.js';
import { checkGeneratedPasswordSink, checkReplaceSink } from './plan-and-apply.js';

export interface ApplySavedRequest {
  readonly saved: SavedPlan;
  readonly planFile: string;
  /** The desired state's name in messages (the paths it is read from now). */
  readonly desiredFile: string;
  readonly reportFile?: string | undefined;
  /** An interrupt: nothing more is sent once it fires. */
  readonly stop: AbortSignal;
  readonly observer?: ServiceObserver;
  readonly onResult?: (result: ChangeResult) => void;
  /** The desired state as read, before anything is sent (its warnings are shown then). */
  readonly onLoaded?: (loaded: LoadedDesiredState) => void;
}

/**
 * `amsync apply PLANFILE` of one service: the desired state read again, the client and the
 * local paths checked, the audit log opened before the first write, then the saved plan
 * applied exactly, or refused when the world moved (applySavedPlan); the outcome told to the webhooks.
 */
export async function applySaved(context: ServiceContext, request: ApplySavedRequest): Promise<{ loaded: LoadedDesiredState; outcome: ApplySavedOutcome }> {
  const { saved } = request;
  const loaded = await context.loadDesired();
  request.onLoaded?.(loaded);
  checkReplaceSink(saved.settings.selection, context.settings.tokensDir ?? context.settings.kubernetesSecret);
  checkGeneratedPasswordSink(loaded.desired, context.settings.tokensDir ?? context.settings.kubernetesSecret);
  checkSinkNames(loaded.desired, context.tokenSink());
  context.client(); // a missing token is a usage error, found before any request
  // So is a local path the apply will write and cannot (exit 1): the state file, lock, tokensDir, audit log, --report.
  await context.checkLocalOutputs({ writes: true, reportFile: request.reportFile, stepSummary: true });
  const log = context.logger.child({ component: 'apply' });
  // Opened before the first write: a log that cannot be opened stops the run here.
  const audit = saved.plan.changes.length > 0 ? context.auditTrail()?.hooks(saved.plan, 'saved-plan') : undefined;
  const outcome = await applySavedPlan({
    saved,
    planFile: request.planFile,
    desiredFile: request.desiredFile,
    desired: loaded.desired,
    desiredFileHash: loaded.fileHash,
    desiredFiles: loaded.files,
    // The interrupt stops the client too: writes waiting in its queue are never sent.
    service: context.service(request.observer, undefined, request.stop),
    passwordState: () => context.passwordState(),
    tokenSink: context.tokenSink(),
    onResult: (r) => {
      log.debug({ kind: r.kind, action: r.action, status: r.status }, 'change result');
      audit?.onResult(r);
      request.onResult?.(r);
    },
    ...(audit ? { onAttempt: audit.onAttempt } : {}),
    acquireLock: context.writerLock,
    maxInFlight: context.settings.concurrency,
    lateCreate: context.lateCreate(),
    signal: request.stop,
  });
  context.notifyOutcome(outcome, false);
  return { loaded, outcome };
}

/**
 * The service the plan was made for, confirmed by the caller. A plan file is a CI artifact
 * (anyone who can write to the pipeline's artifacts can swap it), so the URL is never taken
 * from it alone: it must be configured (--url, AMSYNC_URL or the settings file) and be the
 * plan's, else the bearer token would go wherever the file says. A plan reviewed for staging
 * is not applied to production either. Both refusals come before any request.
 */
export function confirmPlanService(saved: Pick<SavedPlan, 'serviceUrl'>, configured: string | undefined): void {
  if (configured === undefined) {
    throw new SafetyError(
      'plan_url_unconfirmed',
      `the plan was made for ${saved.serviceUrl}, and amsync apply does not take the service URL from a plan file alone; nothing was sent; set --url or AMSYNC_URL to the service it was made for`,
    );
  }
  if (!sameService(configured, saved.serviceUrl)) {
    throw new SafetyError(
      'plan_mismatch',
      `the plan was made for ${saved.serviceUrl}, but the service configured now is ${configured}; nothing was written; apply it to the service it was made for, or plan again`,
    );
  }
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

/**
 * The desired state to apply the plan with: `given` (-f, where the files are now), else the
 * plan's own: the paths it was made from, with --recursive as it was.
 */
export function savedPlanSource(saved: SavedPlan, given: DesiredSource | undefined, recursive: boolean): DesiredSource {
  if (given !== undefined) return given;
  const sources = saved.desiredSources;
  if (sources === undefined) return { paths: [saved.desiredFile] };
  return { paths: sources.paths, ...(sources.recursive === true || recursive ? { recursive: true } : {}) };
}

/** The hash the plan compares (of the one file, or of every file), and each file's. */
export async function hashIfReadable(source: DesiredSource): Promise<{ hash: string; files: LoadedFile[] } | undefined> {
  try {
    const files: LoadedFile[] = [];
    for (const file of await desiredFilesOf(source)) files.push({ file, hash: createHash('sha256').update(await readBounded(file)).digest('hex') });
    return { hash: files.length === 1 ? files[0]!.hash : filesHash(files), files };
  } catch {
    return undefined; // loading it says why, with the desired file's own errors (exit 65)
  }
}

/**
 * Before anything is sent: the plan is of this version and whole, and the desired files (where
 * they are now: `source`) are still the bytes it was made from. Returns how to name them.
 */
export async function checkSavedPlanFiles(saved: SavedPlan, planFile: string, source: DesiredSource, version: string): Promise<string> {
  checkSavedPlan(saved, planFile, version);
  const desiredFile = describeSource(source);
  const before = await hashIfReadable(source);
  if (before !== undefined) checkDesiredFileHash(saved, planFile, desiredFile, before.hash, before.files);
  return desiredFile;
}
