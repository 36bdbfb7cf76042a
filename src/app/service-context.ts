import { basename, resolve } from 'node:path';
import { ClientConfigError, createClient, type AmClient, type CredentialHandover } from '../api/index.js';
import { acquireWriterLock, lateCreateWaits, writerLockPath, type HeldLock } from '../apply/index.js';
import { revisionFromEnv } from '../audit/index.js';
import { readSecretFile, type DesiredSource } from '../desired/index.js';
import { UsageError } from '../errors.js';
import { Notifier, resolveWebhooks } from '../notify/index.js';
import { commandLogLevel, createLogger, type Logger, type NotificationMetrics } from '../obs/index.js';
import { isFsError, localPathError, openPasswordState } from '../secrets/index.js';
import { parseKubeSecretKeyRef, type Settings } from '../settings/index.js';
import type { Timers } from '../time/index.js';
import { createAppContext, type ClientHandle, type ServiceContext } from './app-context.js';
import { AuditTrail } from './audit-trail.js';
import { checkCredentials } from './check-credentials.js';
import { checkLocalInputs } from './check-local-inputs.js';
import { settingWords } from './check-local-outputs.js';
import { attachClientLogging } from './client-logging.js';
import { clientOptionsFrom } from './client-options.js';
import { integratorKeySecretStore } from './integrator-key-secret.js';
import { secretSinkOf } from './secret-sink-of.js';

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
  /** The daemon: its log keeps the setting's level at a terminal too (a one-shot command's drops `info` there: commandLogLevel). */
  readonly daemonLog?: boolean;
  /** amsync_notifications_total, in the daemon. */
  readonly notificationMetrics?: NotificationMetrics;
  /** Fleet: the target this context serves (audit lines and notifications name it). */
  readonly target?: string;
  /** Fleet: the targets file (as given), for messages that name a target's own key (`integratorKey.file of target sp-1 in targets.yaml`). */
  readonly targetsFile?: string;
  /** Fleet: the one notifier of the run, shared by its targets. */
  readonly notifier?: Notifier;
  /** Fleet: the target is observed (`mode: observe` in the targets file): its drift is reported, never written. */
  readonly observeTarget?: boolean;
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

export const noUrlMessage =
  'no service URL: set --url or AMSYNC_URL. To try amsync without a service, run `amsync demo`, or start the emulator with `amsync emulator --port 0 --token dev` and point --url at it';

/**
 * The composition root of a run: every dependency of its context made from the settings (a
 * fleet hands in its one notifier, the daemon its metrics and the key of the client it
 * replaces), then the context built once from them (createAppContext checks them).
 */
export function createServiceContext(inputs: ContextInputs, overrides: ContextOverrides = {}): ServiceContext {
  const { settings, source, env } = inputs;
  const logger =
    overrides.logger ??
    createLogger({ level: logLevelOf(settings, inputs.stderr, overrides.daemonLog === true), destination: overrides.logStream ?? inputs.stderr, pretty: inputs.stderr.isTTY === true, colorize: !env.NO_COLOR });
  // Made up front: a webhook key that cannot be read is a bad settings file (exit 65), found
  // before any request, never in the middle of a run. A fleet hands every target one notifier.
  const notifier = overrides.notifier ?? createNotifier(settings, env, logger, overrides.notificationMetrics);
  const target = overrides.target;
  return createAppContext({
    settings,
    source,
    env,
    logger,
    client: clientHandle(settings, logger, overrides),
    passwordState: () => openPasswordState({ path: resolve(settings.stateFile), serviceUrl: settings.url!, keyFromEnv: env.AMSYNC_STATE_KEY, setting: settingWords('stateFile') }),
    writerLock: (signal) => takeWriterLock(settings, logger, signal),
    tokenSink: secretSinkOf(settings),
    audit: settings.auditLog === undefined ? undefined : new AuditTrail(settings.auditLog, env, logger, target ?? null),
    notifier,
    ...(overrides.notifier === undefined ? {} : { sharedNotifier: true }),
    lateCreate: {
      waitsMs: lateCreateWaits(settings.http.timeoutMs),
      // The client's clock: tests that move it move these waits too.
      ...(overrides.timers === undefined ? {} : { timers: overrides.timers }),
    },
    ...(target === undefined ? {} : { target }),
    ...(overrides.observeTarget === true ? { observe: true } : {}),
  });
}

/** The run's log level: the setting's; for a one-shot command at a terminal, `warn` unless a level was asked for. */
export function logLevelOf(settings: Settings, stderr: LogStream, daemon = false): Settings['logLevel'] {
  if (daemon) return settings.logLevel;
  return commandLogLevel(settings.logLevel, { terminal: stderr.isTTY === true, asked: settings.logLevelGiven === true });
}

/**
 * The client, made on first use: a missing URL or token is a UsageError then (after the
 * desired file is read), and the credentials and local inputs are checked before it exists.
 */
function clientHandle(settings: Settings, logger: Logger, overrides: ContextOverrides): ClientHandle {
  let client: AmClient | undefined;
  return {
    get opened() {
      return client;
    },
    open: () => (client ??= openClient(settings, logger, overrides)),
  };
}

function openClient(settings: Settings, logger: Logger, overrides: ContextOverrides): AmClient {
  if (!settings.url) throw new UsageError(noUrlMessage, 'no_url');
  // A fleet target's key file is its integratorKey.file, not AMSYNC_REFRESH_TOKEN_FILE.
  const target = overrides.target;
  checkCredentials(settings, undefined, target === undefined ? {} : { keyFile: `integratorKey.file of target ${target}${overrides.targetsFile === undefined ? '' : ` in ${basename(overrides.targetsFile)}`}` });
  checkLocalInputs(settings);
  let client: AmClient;
  try {
    client = createClient({
      ...clientOptionsFrom(settings, settings.url),
      ...integratorKeyStoreOf(settings),
      // Tests move the client's clock to age access tokens without waiting.
      ...(overrides.timers === undefined ? {} : { timers: overrides.timers }),
      ...(overrides.keepUnpersistedKey === true ? { keepUnpersistedKey: true } : {}),
      ...(overrides.credentialFrom === undefined ? {} : { credentialFrom: overrides.credentialFrom }),
    });
  } catch (error) {
    // A URL amsync will not use (plain http to another host), a CA file it cannot read:
    // the command line or the settings are wrong, nothing was sent.
    if (error instanceof ClientConfigError) throw new UsageError(error.message, error.code, { cause: error });
    throw error;
  }
  attachClientLogging(client, logger);
  return client;
}

/** The writer lock beside the state file; a takeover of a dead writer's lock is a warning. */
async function takeWriterLock(settings: Settings, logger: Logger, signal?: AbortSignal): Promise<HeldLock> {
  const path = writerLockPath(resolve(settings.stateFile));
  const onTakeover = (message: string) => logger.warn({ lock: path }, message);
  return acquireWriterLock(path, { timeoutMs: settings.lockTimeoutMs, onTakeover, ...(signal === undefined ? {} : { signal }) }).catch((error: unknown) => {
    throw lockError(error, path);
  });
}
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


/** The integrator key's Secret (integratorKeySecret), when set: read and written back as a key file is. */
function integratorKeyStoreOf(settings: Settings): { integratorKeyStore?: ReturnType<typeof integratorKeySecretStore> } {
  const ref = settings.integratorKeySecret === undefined ? undefined : parseKubeSecretKeyRef(settings.integratorKeySecret);
  return ref === undefined ? {} : { integratorKeyStore: integratorKeySecretStore(ref) };
}
