import { basename, resolve } from 'node:path';
import { ClientConfigError, createClient, type AmClient, type CredentialHandover, type WriteFence } from '../api/index.js';
import { type Timers } from '../time/index.js';
import { acquireWriterLock, fencingWrites, lateCreateWaits, writerLockPath, type LateCreateLooks } from '../apply/index.js';
import { runSync, syncEvents, type SyncInput, type SyncOutcome } from '../sync/index.js';
import type { HeldLock } from '../apply/index.js';
import { InvalidInputError, UsageError } from '../errors.js';
import type { AccessService, ChangeResult, DesiredState, Diagnostic, NotifyEvent } from '../model/index.js';
import { createLogger, type Logger, type NotificationMetrics } from '../obs/index.js';
import { isFsError, localPathError, openPasswordState, type PasswordState, TokenSink } from '../secrets/index.js';
import type { Settings } from '../settings/index.js';
import { desiredFoldersOf, loadDesired, readSecretFile, secretFilesOf, type DesiredSource, type LoadedFile } from '../desired/index.js';
import { revisionFromEnv, type AuditTrigger } from '../audit/index.js';
import { Notifier, resolveWebhooks } from '../notify/index.js';
import { AuditTrail, type AuditHooks } from './audit-trail.js';
import { checkCredentials } from './check-credentials.js';
import { checkLocalInputs } from './check-local-inputs.js';
import { checkLocalOutputs, localOutputsOf, settingWords, type PlannedOutputs } from './check-local-outputs.js';
import { clientOptionsFrom } from './client-options.js';
import { observedService, type ServiceObserver } from './observed-service.js';

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
  readonly rotatePasswords?: boolean;
  readonly pruneAll?: boolean;
  readonly allowEmptyPrune?: boolean;
  readonly deleteDuplicateApikeys?: boolean;
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

export interface ContextOverrides {
  readonly logger?: Logger;
  /** Where the logs go when no logger is given. @default inputs.stderr */
  readonly logStream?: LogStream;
  /** The client's clock (tests age access tokens without waiting). */
  readonly timers?: Timers;
  /**
   * The daemon: a rotated integrator key that cannot be written back is kept in memory (the
   * daemon turns not ready) instead of failing the run, as a one-shot command does.
   */
  readonly keepUnpersistedKey?: boolean;
  /** The daemon's settings reload: the integrator key of the client this context's replaces (ClientOptions.credentialFrom). */
  readonly credentialFrom?: CredentialHandover;
  /** amsync_notifications_total, in the daemon. */
  readonly notificationMetrics?: NotificationMetrics;
  /** Fleet: the target this context serves (audit lines and notifications name it). */
  readonly target?: string;
  /** Fleet: the targets file (as given), for messages that name a target's own key (`integratorKey.file of target sp-1 in targets.yaml`). */
  readonly targetsFile?: string;
  /** Fleet: the one notifier of the run, shared by its targets. */
  readonly notifier?: Notifier;
}

type Env = Readonly<Record<string, string | undefined>>;

/** Where the logs go: the command's stderr, or a test's capture. */
export interface LogStream {
  write(chunk: string): boolean;
  /** A terminal: pretty log lines. */
  readonly isTTY?: boolean;
}

/** What a context is made from: the settings and the desired source, resolved by whoever started the run (the CLI, from flags and env). */
export interface ContextInputs {
  readonly settings: Settings;
  readonly source: DesiredSource;
  readonly env: Env;
  /** Where the logs go when no logger (nor logStream) is given. */
  readonly stderr: LogStream;
}

/** What every command that talks to the service needs, built once from flags and env. */
export interface ServiceContext {
  readonly settings: Settings;
  /** The desired state's name in headings and messages (the -f paths, joined). */
  readonly file: string;
  /** Where the desired state is read from: -f as given, or AMSYNC_FILE. */
  readonly source: DesiredSource;
  readonly logger: Logger;
  loadDesired(): Promise<LoadedDesiredState>;
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
  tokenSink(): TokenSink | undefined;
  /** The host's writer lock beside the state file (DESIGN.md §6 "One writer"). */
  writerLock(): Promise<HeldLock>;
  /** Further looks for a lost apikey create, from the client's request timeout (DESIGN.md §8). */
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

export const noUrlMessage =
  'no service URL: set --url or AMSYNC_URL. To try amsync without a service, run `amsync demo`, or start the emulator with `amsync emulator --port 0 --token dev` and point --url at it';

export function createServiceContext(inputs: ContextInputs, overrides: ContextOverrides = {}): ServiceContext {
  const { settings, source, env } = inputs;
  const logger =
    overrides.logger ??
    createLogger({ level: settings.logLevel, destination: overrides.logStream ?? inputs.stderr, pretty: inputs.stderr.isTTY === true, colorize: !env.NO_COLOR });
  // Made up front: a webhook key that cannot be read is a bad settings file (exit 65), found
  // before any request, never in the middle of a run. A fleet hands every target one notifier.
  const notifier = overrides.notifier ?? createNotifier(settings, env, logger, overrides.notificationMetrics);
  return new CommandServiceContext({ settings, source, logger, env, overrides, notifier });
}

interface ContextParts {
  readonly settings: Settings;
  readonly source: DesiredSource;
  readonly logger: Logger;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly overrides: ContextOverrides;
  readonly notifier: Notifier | undefined;
}

/** The context of one command (or one fleet target): the client, state, lock, audit and webhooks, each made on first use. */
class CommandServiceContext implements ServiceContext {
  readonly settings: Settings;
  readonly file: string;
  readonly source: DesiredSource;
  readonly logger: Logger;
  readonly #env: ContextParts['env'];
  readonly #overrides: ContextOverrides;
  readonly #notifier: Notifier | undefined;
  #client: AmClient | undefined;
  #audit: AuditTrail | undefined;
  /** A `failure` event went out for this context's run: the error thrown after it is the same news. */
  #failureSent = false;

  constructor(parts: ContextParts) {
    this.settings = parts.settings;
    this.source = parts.source;
    // As the CLI's describeSource: the -f paths, joined.
    this.file = parts.source.paths.join(', ');
    this.logger = parts.logger;
    this.#env = parts.env;
    this.#overrides = parts.overrides;
    this.#notifier = parts.notifier;
  }

  async loadDesired(): Promise<LoadedDesiredState> {
    const loaded = await loadDesired(this.source, this.#env);
    const folders = await desiredFoldersOf(this.source);
    return {
      desired: loaded.value,
      warnings: loaded.warnings,
      fileHash: loaded.fileHash,
      files: loaded.files,
      watchFiles: [...new Set([...loaded.files.map((f) => resolve(f.file)), ...folders.map((d) => resolve(d)), ...secretFilesOf(loaded.value)])],
    };
  }

  client = (): AmClient => {
    if (this.#client) return this.#client;
    const { settings } = this;
    if (!settings.url) throw new UsageError(noUrlMessage, 'no_url');
    // A fleet target's key file is its integratorKey.file, not AMSYNC_REFRESH_TOKEN_FILE.
    const target = this.#overrides.target;
    checkCredentials(settings, undefined, target === undefined ? {} : { keyFile: `integratorKey.file of target ${target}${this.#overrides.targetsFile === undefined ? '' : ` in ${basename(this.#overrides.targetsFile)}`}` });
    checkLocalInputs(settings);
    try {
      this.#client = createClient({
        ...clientOptionsFrom(settings, settings.url),
        // Tests move the client's clock to age access tokens without waiting.
        ...(this.#overrides.timers === undefined ? {} : { timers: this.#overrides.timers }),
        ...(this.#overrides.keepUnpersistedKey === true ? { keepUnpersistedKey: true } : {}),
        ...(this.#overrides.credentialFrom === undefined ? {} : { credentialFrom: this.#overrides.credentialFrom }),
      });
    } catch (error) {
      // A URL amsync will not use (plain http to another host), a CA file it cannot read:
      // the command line or the settings are wrong, nothing was sent.
      if (error instanceof ClientConfigError) throw new UsageError(error.message, error.code, { cause: error });
      throw error;
    }
    attachClientLogging(this.#client, this.logger);
    return this.#client;
  };

  /**
   * `signal` cancels every request (the daemon's run deadline); `stop` stops them short of the
   * wire (an interrupt); `observer` sees pages and writes.
   */
  service = (observer?: ServiceObserver, signal?: AbortSignal, stop?: AbortSignal): AccessService => {
    const cancellable = signal === undefined ? this.client() : this.client().withSignal(signal);
    const client = stop === undefined ? cancellable : cancellable.withStop(stop);
    return observer ? observedService(client, observer) : client;
  };

  onWire = (): number => this.#client?.onWire() ?? 0;

  passwordState = (): Promise<PasswordState> =>
    openPasswordState({ path: resolve(this.settings.stateFile), serviceUrl: this.settings.url!, keyFromEnv: this.#env.AMSYNC_STATE_KEY, setting: settingWords('stateFile') });

  /** Held, the lock fences every write of this context's client: one that lost it sends nothing more. */
  writerLock = async (signal?: AbortSignal): Promise<HeldLock> => {
    const path = writerLockPath(resolve(this.settings.stateFile));
    const onTakeover = (message: string) => this.logger.warn({ lock: path }, message);
    const lock = await acquireWriterLock(path, { timeoutMs: this.settings.lockTimeoutMs, onTakeover, ...(signal === undefined ? {} : { signal }) }).catch((error: unknown) => {
      throw lockError(error, path);
    });
    return fencingWrites(lock, this.client());
  };

  checkLocalOutputs = (planned: PlannedOutputs): Promise<void> => checkLocalOutputs(localOutputsOf(this.settings, this.#env, planned));

  lateCreate = (): LateCreateLooks => ({
    waitsMs: lateCreateWaits(this.settings.http.timeoutMs),
    // The client's clock: tests that move it move these waits too.
    ...(this.#overrides.timers === undefined ? {} : { timers: this.#overrides.timers }),
  });

  tokenSink = (): TokenSink | undefined => (this.settings.tokensDir ? new TokenSink(resolve(this.settings.tokensDir)) : undefined);

  auditTrail = (): AuditTrail | undefined =>
    this.settings.auditLog === undefined ? undefined : (this.#audit ??= new AuditTrail(this.settings.auditLog, this.#env, this.logger, this.#overrides.target ?? null));

  notify(event: NotifyEvent): void {
    const target = this.#overrides.target;
    this.#notifier?.notify(target === undefined ? event : { ...event, target });
  }

  notifyOutcome(outcome: Pick<SyncOutcome, 'plan' | 'results' | 'refusal' | 'cancelled'>, dryRun: boolean): void {
    if (!this.#notifier) return;
    for (const event of syncEvents(outcome, { dryRun, target: this.#overrides.target ?? null })) {
      if (event.event === 'failure') this.#failureSent = true;
      this.#notifier.notify(event);
    }
  }

  notifyFailure(error: unknown): void {
    if (error instanceof UsageError || error instanceof InvalidInputError || this.#failureSent) return;
    this.#failureSent = true;
    this.notify({ event: 'failure', message: error instanceof Error ? error.message : String(error) });
  }

  async closeNotifier(ms: number): Promise<void> {
    // A shared notifier (a fleet's) is closed by whoever made it.
    if (!this.#notifier || this.#overrides.notifier) return;
    await this.#notifier.flush(ms);
    await this.#notifier.close();
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
      ...(options.approvals === undefined ? {} : { approvals: options.approvals }),
      dryRun: options.dryRun,
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
      lost = await this.#client?.settleCredential(Math.min(credentialGraceMs, renewalGraceMs));
      if (lost !== undefined) this.notifyFailure(lost);
      await this.closeNotifier(notifyGraceMs);
    } finally {
      this.close();
    }
    if (lost !== undefined) throw lost;
  }

  close(): void {
    this.#client?.close();
    this.#audit?.close();
  }
}

/** How long the end of a one-shot run waits for a key renewal in flight: a token request's timeout and a retry. */
export const renewalGraceMs = 60_000;

/**
 * The lock's own refusals (another writer) are AmsyncErrors and pass; a file-system error is
 * its folder's, one line rather than an unexpected failure. The lock is taken before the
 * first request, so nothing was sent.
 */
function lockError(error: unknown, path: string): unknown {
  if (!isFsError(error)) return error;
  const setting = `beside the state file: ${settingWords('stateFile')}`;
  return localPathError(error, { what: 'the writer lock', path, setting, knob: '--state-file' }, { code: 'writer_lock_unwritable', nothingSent: true });
}

/**
 * The notifier of notify.webhooks; undefined without webhooks. Resolving the webhooks' keys
 * here makes one that cannot be read a bad settings file (exit 65), before any request.
 */
export function createNotifier(settings: Settings, env: Readonly<Record<string, string | undefined>>, logger: Logger, metrics?: NotificationMetrics): Notifier | undefined {
  if (settings.notify.webhooks.length === 0) return undefined;
  const webhooks = resolveWebhooks(settings.notify.webhooks, { env, readSecretFile, allowInsecureHttp: settings.http.allowInsecureHttp });
  const log = logger.child({ component: 'notify' });
  return new Notifier({
    webhooks,
    queueSize: settings.notify.queueSize,
    timeoutMs: settings.notify.timeoutMs,
    maxAttempts: settings.notify.maxAttempts,
    revision: revisionFromEnv(env),
    ...(metrics ? { metrics } : {}),
    onDelivery: (r) => (r.outcome === 'sent' ? log.debug(r, 'notification sent') : log.warn(r, 'notification not delivered')),
  });
}

/**
 * One debug line per attempt, a retried one included (it says how long until the next, a
 * Retry-After pause too, and `rate` shows the limiter slowing down): a retry that works is not
 * news, and one that does not ends in the call's error, which whoever called reports once.
 * Throttling is counted in the daemon's metrics. A token re-read is info: it changes the run.
 */
function attachClientLogging(client: AmClient, logger: Logger): void {
  const log = logger.child({ component: 'client' });
  client.events.on('request', (e) => {
    const fields = { method: e.method, route: e.route, status: e.status, error: e.error, durationMs: Math.round(e.durationMs), attempt: e.attempt, rate: e.rate };
    if (e.retryDelayMs === undefined) log.debug(fields, 'request');
    else log.debug({ ...fields, retryInMs: Math.round(e.retryDelayMs) }, 'request failed; retrying');
  });

  client.events.on('token', (e) => log.info({ changed: e.changed }, 'token file re-read after 401'));
  attachCredentialLogging(client, log);
}

/**
 * The integrator key's life in the log: renewals at debug, the rest once per change of
 * state, so a write-back that keeps failing is one clear line, not one per renewal.
 */
function attachCredentialLogging(client: AmClient, log: Logger): void {
  let writeBackFailing: string | undefined;
  client.events.on('credential', (e) => {
    switch (e.action) {
      case 'exchanged':
        log.info({ expiresInSeconds: e.expiresInSeconds }, 'logged in with the integrator key');
        return;
      case 'renewed':
        log.debug({ expiresInSeconds: e.expiresInSeconds }, 'access token renewed');
        return;
      case 'rotated':
        if (e.persisted && writeBackFailing !== undefined) {
          writeBackFailing = undefined;
          log.info('the rotated integrator key is written back to its file again');
        }
        // Not kept (a one-shot run): the run's one error line says it.
        if (!e.persisted && e.firstTime === true && e.kept === true) {
          log.warn('the service rotated the integrator key; it came from AMSYNC_REFRESH_TOKEN, so a restart would use the old one: use AMSYNC_REFRESH_TOKEN_FILE');
        }
        return;
      case 'write_back_failed':
        if (e.kept !== true) return;
        if (writeBackFailing !== e.error) {
          log.error({ file: e.file, error: e.error }, `cannot write the rotated integrator key back to ${e.file} (${e.error}); amsync goes on with it, but a restart would use the old key, which stops working`);
        }
        writeBackFailing = e.error;
        return;
      case 'renewal_deferred':
        log.warn({ error: e.error }, 'could not renew the access token; using the current one until it is renewed');
        return;
      case 'rejected':
        return; // the error itself says it, where it surfaces
    }
  });
}
