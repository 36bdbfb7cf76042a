import { resolve } from 'node:path';
import type { AmClient, WriteFence } from '../api/index.js';
import { fencingWrites, type HeldLock, type LateCreateLooks } from '../apply/index.js';
import { desiredFoldersOf, loadDesired, secretFilesOf, type DesiredSource, type LoadedFile } from '../desired/index.js';
import { InvalidInputError, UsageError } from '../errors.js';
import type { AccessService, ChangeResult, DesiredState, Diagnostic, NotifyEvent } from '../model/index.js';
import type { AuditTrigger } from '../audit/index.js';
import type { Notifier } from '../notify/index.js';
import type { Logger } from '../obs/index.js';
import type { PasswordState, SecretSink } from '../secrets/index.js';
import type { Settings } from '../settings/index.js';
import type { SelectionFlags } from '../plan/index.js';
import { runSync, syncEvents, type SyncInput, type SyncOutcome } from '../sync/index.js';
import type { AuditHooks, AuditTrail } from './audit-trail.js';
import { checkLocalOutputs, localOutputsOf, type PlannedOutputs } from './check-local-outputs.js';
import { observedService, type ServiceObserver } from './observed-service.js';

type Env = Readonly<Record<string, string | undefined>>;

export interface LoadedDesiredState {
  readonly desired: DesiredState;
  readonly warnings: readonly Diagnostic[];
  /** sha256 of the file, or of the files (filesHash) when there are several. */
  readonly fileHash: string;
  /** Every desired-state file read, with its hash, in load order. */
  readonly files: readonly LoadedFile[];
  /**
   * The desired files, the folders given to -f (a file added to one or removed changes its
   * listing) and every secret file they reference: the daemon watches them.
   */
  readonly watchFiles: string[];
}

export interface SyncOptions {
  readonly dryRun: boolean;
  /** The wall clock expiries are planned against (the daemon's, virtual in tests). @default Date.now */
  readonly now?: () => number;
  readonly rotatePasswords?: boolean;
  readonly pruneAll?: boolean;
  readonly allowEmptyPrune?: boolean;
  readonly deleteDuplicateApikeys?: boolean;
  /** `--only`, `--exclude`, `--replace` (issue 29). */
  readonly selection?: SelectionFlags;
  /** `--approve`, or the daemon's approvals file: hashes that approve gated changes. */
  readonly approvals?: Iterable<string>;
  readonly onResult?: (result: ChangeResult) => void;
  /** Cancels every request of this sync (the daemon's run deadline). */
  readonly signal?: AbortSignal;
  /**
   * Nothing more is sent once this fires (an interrupt, a daemon stopping, a lost Lease): no
   * write starts, requests waiting in the client's queue or for a retry are cancelled, and
   * those already sent finish — unlike `signal`, which cancels them too.
   */
  readonly stopWrites?: AbortSignal;
  /** Checked right before each write request is sent, for this sync (the daemon's Lease: LeaseElector.fence). */
  readonly writeFence?: WriteFence;
  /** Shown the plan before anything is written; false cancels (see runSync). */
  readonly beforeApply?: SyncInput['beforeApply'];
  /** Told of every page listed and every write started (the live output). */
  readonly observer?: ServiceObserver;
  /** What started this run, for the audit log. @default 'manual' */
  readonly trigger?: AuditTrigger;
}

/** What every command that talks to the service needs, built once from flags and env. */
export interface ServiceContext {
  readonly settings: Settings;
  /** The desired state's name in headings and messages (the -f paths, joined). */
  readonly file: string;
  /** Where the desired state is read from: -f as given, or AMSYNC_FILE. */
  readonly source: DesiredSource;
  readonly logger: Logger;
  /** `secrets: 'optional'` (`plan --secrets optional`): a password that cannot be read is planned without. */
  loadDesired(options?: { readonly secrets?: 'require' | 'optional' }): Promise<LoadedDesiredState>;
  /** The client, created on first use; throws UsageError without a URL or token. */
  client(): AmClient;
  /**
   * The service; with an observer, every page listed and every write started is reported to
   * it; with `stop` (an interrupt), its calls stop short of the wire once it fires (AmClient.withStop).
   */
  service(observer?: ServiceObserver, signal?: AbortSignal, stop?: AbortSignal): AccessService;
  /** Requests sent and not answered yet (0 before the client exists): what an interrupt lets finish. */
  onWire(): number;
  /** The password state file of this service (fingerprints of applied passwords). */
  passwordState(): Promise<PasswordState>;
  /** Where apikey tokens go, when `tokensDir` is set. */
  tokenSink(): SecretSink | undefined;
  /** The host's writer lock beside the state file (README, "One writer"). */
  writerLock(): Promise<HeldLock>;
  /** Further looks for a lost apikey create, from the client's request timeout (README, "Safety"). */
  lateCreate(): LateCreateLooks;
  /**
   * Before the first request: every local path the command will write (the state file, its
   * lock and key, tokensDir, the audit log, a report or plan file) can be written, or one line
   * naming the path, its setting and the fix (LocalPathError, exit 1) with nothing sent.
   */
  checkLocalOutputs(planned: PlannedOutputs): Promise<void>;
  sync(desired: DesiredState, options: SyncOptions): Promise<SyncOutcome>;
  /** `--audit-log`: the audit log of this process's writes; undefined when not set. */
  auditTrail(): AuditTrail | undefined;
  /**
   * Tells the webhooks (notify.webhooks), in the background: never blocks, never throws.
   * Without webhooks it does nothing.
   */
  notify(event: NotifyEvent): void;
  /**
   * A run that failed is a `failure` event, unless its outcome's events said so already (a
   * refusal, changes that did not apply) or nothing was sent (a bad command line or file).
   */
  notifyFailure(error: unknown): void;
  /** The events of a sync's outcome (drift found, changes applied, failure) to the webhooks. */
  notifyOutcome(outcome: Pick<SyncOutcome, 'plan' | 'results' | 'refusal' | 'cancelled'>, dryRun: boolean): void;
  /** Gives notifications still queued up to `ms` to go out, then stops the notifier. */
  closeNotifier(ms: number): Promise<void>;
  /**
   * The end of a one-shot command (sync, plan, apply, export, a fleet's target), instead of
   * close(): waits (bounded) for a renewal of the integrator key in flight, closes the
   * notifier (`notifyGraceMs`) and the client, then throws CredentialError
   * `integrator_key_not_persisted` when a key the service rotated could not be kept: the run
   * must not end green with a key nobody has.
   */
  finish(notifyGraceMs: number, credentialGraceMs?: number): Promise<void>;
  close(): void;
}

/**
 * The client of a context: opened on the first call to `open` (that is when the credentials
 * and local inputs are checked: after the desired file is read, so a bad file is exit 65
 * before a missing token is exit 64), the same one after. `opened` never opens one: counting
 * requests on the wire or closing must not log in.
 */
export interface ClientHandle {
  open(): AmClient;
  readonly opened: AmClient | undefined;
}

/**
 * Everything one run of one service needs, made by whoever starts it (createServiceContext
 * from the settings, a test by hand). The context makes none of it: it is checked against
 * the settings once, in createAppContext.
 */
export interface AppDeps {
  readonly settings: Settings;
  /** Where the desired state is read from. */
  readonly source: DesiredSource;
  /** The environment the desired file's `env:` references are read from. */
  readonly env: Env;
  readonly logger: Logger;
  readonly client: ClientHandle;
  /** Opens the password state file of this service (fingerprints of applied passwords); once per run. */
  readonly passwordState: () => Promise<PasswordState>;
  /** Takes the host's writer lock beside the state file (README, "One writer"); the context fences the client's writes with it. */
  readonly writerLock: (signal?: AbortSignal) => Promise<HeldLock>;
  /** Where apikey tokens go: present exactly when `tokensDir` or `kubernetesSecret` is set. */
  readonly tokenSink: SecretSink | undefined;
  /** The audit log of this process's writes: present exactly when `auditLog` is set. */
  readonly audit: AuditTrail | undefined;
  /** The webhooks' notifier: present exactly when `notify.webhooks` lists some. */
  readonly notifier: Notifier | undefined;
  /** A fleet's one notifier, shared by its targets: closed by whoever made it, not by this context. */
  readonly sharedNotifier?: boolean;
  /** Further looks for a lost apikey create (README, "Safety"). */
  readonly lateCreate: LateCreateLooks;
  /** Fleet: the target this context serves (audit lines and notifications name it). */
  readonly target?: string;
  /** The service is observed as a whole (a target with `mode: observe`): every sync only reports drift. */
  readonly observe?: boolean;
}

/** A context assembled wrong: a bug in whoever built it, never a user's mistake. */
export class AppContextError extends Error {
  override readonly name = 'AppContextError';
}

const required = ['settings', 'source', 'env', 'logger', 'client', 'passwordState', 'writerLock', 'lateCreate'] as const;

/**
 * The one application context of a run, from its dependencies. Refuses, loudly, a dependency
 * missing, or one that contradicts the settings (a token sink without tokensDir, an audit
 * log for another target, webhooks set and no notifier): such a context would drop tokens,
 * audit lines or notifications without a word.
 */
export function createAppContext(deps: AppDeps): ServiceContext {
  checkDeps(deps);
  return new AppContext(deps);
}

function checkDeps(deps: AppDeps): void {
  const fail = (why: string): never => {
    throw new AppContextError(`the application context cannot be made: ${why}`);
  };
  for (const name of required) if (deps[name] === undefined || deps[name] === null) fail(`${name} is missing`);
  const { settings } = deps;
  const present = (what: string, dep: unknown, setting: string, set: boolean): void => {
    if (set && dep === undefined) fail(`${setting} is set and no ${what} was given`);
    if (!set && dep !== undefined) fail(`${/^[aeiou]/.test(what) ? 'an' : 'a'} ${what} was given and ${setting} is not set`);
  };
  const sinkSetting = settings.tokensDir === undefined && settings.kubernetesSecret !== undefined ? 'kubernetesSecret' : 'tokensDir';
  present('token sink', deps.tokenSink, sinkSetting, settings.tokensDir !== undefined || settings.kubernetesSecret !== undefined);
  present('audit trail', deps.audit, 'auditLog', settings.auditLog !== undefined);
  present('notifier', deps.notifier, 'notify.webhooks', settings.notify.webhooks.length > 0);
  if (deps.sharedNotifier === true && deps.notifier === undefined) fail('sharedNotifier is set and no notifier was given');
  if (deps.audit !== undefined && deps.audit.target !== (deps.target ?? null)) {
    fail(`the audit trail writes for ${deps.audit.target === null ? 'no target' : `target ${deps.audit.target}`} and the context serves ${deps.target === undefined ? 'no target' : `target ${deps.target}`}`);
  }
}

/** The context of one command (or one fleet target, or the daemon's service): what it was given, and the run's steps over it. */
class AppContext implements ServiceContext {
  readonly settings: Settings;
  readonly file: string;
  readonly source: DesiredSource;
  readonly logger: Logger;
  readonly #deps: AppDeps;
  /** A `failure` event went out for this context's run: the error thrown after it is the same news. */
  #failureSent = false;

  constructor(deps: AppDeps) {
    this.#deps = deps;
    this.settings = deps.settings;
    this.source = deps.source;
    // As the CLI's describeSource: the -f paths, joined.
    this.file = deps.source.paths.join(', ');
    this.logger = deps.logger;
  }

  async loadDesired(options: { readonly secrets?: 'require' | 'optional' } = {}): Promise<LoadedDesiredState> {
    const loaded = await loadDesired(this.source, this.#deps.env, options.secrets === 'optional' ? { secrets: 'optional' } : {});
    const folders = await desiredFoldersOf(this.source);
    return {
      desired: loaded.value,
      warnings: loaded.warnings,
      fileHash: loaded.fileHash,
      files: loaded.files,
      watchFiles: [...new Set([...loaded.files.map((f) => resolve(f.file)), ...folders.map((d) => resolve(d)), ...secretFilesOf(loaded.value)])],
    };
  }

  client = (): AmClient => this.#deps.client.open();

  /**
   * `signal` cancels every request (the daemon's run deadline); `stop` stops them short of the
   * wire (an interrupt); `observer` sees pages and writes.
   */
  service = (observer?: ServiceObserver, signal?: AbortSignal, stop?: AbortSignal): AccessService => {
    const cancellable = signal === undefined ? this.client() : this.client().withSignal(signal);
    const client = stop === undefined ? cancellable : cancellable.withStop(stop);
    return observer ? observedService(client, observer) : client;
  };

  onWire = (): number => this.#deps.client.opened?.onWire() ?? 0;

  passwordState = (): Promise<PasswordState> => this.#deps.passwordState();

  /** Held, the lock fences every write of this context's client: one that lost it sends nothing more. */
  writerLock = async (signal?: AbortSignal): Promise<HeldLock> => fencingWrites(await this.#deps.writerLock(signal), this.client());

  checkLocalOutputs = (planned: PlannedOutputs): Promise<void> => checkLocalOutputs(localOutputsOf(this.settings, this.#deps.env, planned));

  lateCreate = (): LateCreateLooks => this.#deps.lateCreate;

  tokenSink = (): SecretSink | undefined => this.#deps.tokenSink;

  auditTrail = (): AuditTrail | undefined => this.#deps.audit;

  notify(event: NotifyEvent): void {
    const target = this.#deps.target;
    this.#deps.notifier?.notify(target === undefined ? event : { ...event, target });
  }

  notifyOutcome(outcome: Pick<SyncOutcome, 'plan' | 'results' | 'refusal' | 'cancelled'>, dryRun: boolean): void {
    const notifier = this.#deps.notifier;
    if (!notifier) return;
    for (const event of syncEvents(outcome, { dryRun, target: this.#deps.target ?? null })) {
      if (event.event === 'failure') this.#failureSent = true;
      notifier.notify(event);
    }
  }

  notifyFailure(error: unknown): void {
    if (error instanceof UsageError || error instanceof InvalidInputError || this.#failureSent) return;
    this.#failureSent = true;
    this.notify({ event: 'failure', message: error instanceof Error ? error.message : String(error) });
  }

  async closeNotifier(ms: number): Promise<void> {
    // A shared notifier (a fleet's) is closed by whoever made it.
    const notifier = this.#deps.notifier;
    if (!notifier || this.#deps.sharedNotifier === true) return;
    await notifier.flush(ms);
    await notifier.close();
  }

  sync(desired: DesiredState, options: SyncOptions): Promise<SyncOutcome> {
    const trail = options.dryRun ? undefined : this.auditTrail();
    let hooks: AuditHooks | undefined;
    const unfence = options.writeFence === undefined ? undefined : this.client().fenceWrites(options.writeFence);
    return runSync({
      desired,
      // The stop reaches the client too: writes waiting in its queue are never sent.
      service: this.service(options.observer, options.signal, options.stopWrites),
      passwordState: this.passwordState,
      rotatePasswords: options.rotatePasswords,
      pruneAll: options.pruneAll,
      maxDeletes: this.settings.maxDeletes,
      allowEmptyPrune: options.allowEmptyPrune,
      deleteDuplicateApikeys: options.deleteDuplicateApikeys,
      ...(options.selection === undefined ? {} : { selection: options.selection }),
      ...(this.#deps.observe === true ? { observe: true } : {}),
      ...(options.approvals === undefined ? {} : { approvals: options.approvals }),
      dryRun: options.dryRun,
      ...(options.now === undefined ? {} : { now: options.now }),
      tokenSink: this.tokenSink(),
      onResult: (result) => {
        hooks?.onResult(result);
        options.onResult?.(result);
      },
      onAttempt: (change) => hooks?.onAttempt(change),
      acquireLock: this.writerLock,
      maxInFlight: this.settings.concurrency,
      lateCreate: this.lateCreate(),
      signal: options.stopWrites,
      beforeApply: async (plan, roleNames, approval) => {
        const answer = options.beforeApply === undefined ? true : await options.beforeApply(plan, roleNames, approval);
        // Opened before the first write: a log that cannot be opened stops the run here.
        if (answer !== false && trail !== undefined && plan.changes.length > 0) hooks = trail.hooks(plan, options.trigger ?? 'manual');
        return answer;
      },
    }).finally(() => unfence?.());
  }

  /** `credentialGraceMs`: a shorter wait for a renewal in flight (after an interrupt). @default renewalGraceMs */
  async finish(notifyGraceMs: number, credentialGraceMs = renewalGraceMs): Promise<void> {
    let lost: unknown;
    try {
      lost = await this.#deps.client.opened?.settleCredential(Math.min(credentialGraceMs, renewalGraceMs));
      if (lost !== undefined) this.notifyFailure(lost);
      await this.closeNotifier(notifyGraceMs);
    } finally {
      this.close();
    }
    if (lost !== undefined) throw lost;
  }

  close(): void {
    this.#deps.client.opened?.close();
    this.#deps.audit?.close();
  }
}

/** How long the end of a one-shot run waits for a key renewal in flight: a token request's timeout and a retry. */
export const renewalGraceMs = 60_000;
