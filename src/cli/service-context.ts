import { resolve } from 'node:path';
import { ClientConfigError, createClient, type AmClient } from '../api/index.js';
import { clientService } from '../apply/client-service.js';
import { runSync, type SyncOutcome } from '../apply/run-sync.js';
import type { ServiceWriter } from '../apply/service-writer.js';
import { UsageError } from '../errors.js';
import type { ChangeResult, DesiredState, Diagnostic, Plan } from '../model/index.js';
import { createLogger, type Logger } from '../obs/logger.js';
import { openPasswordState, type PasswordState } from '../secrets/state-file.js';
import { TokenSink } from '../secrets/token-sink.js';
import type { Settings } from '../settings/index.js';
import { loadDesired, secretFilesOf } from '../spec/index.js';
import { checkLocalInputs } from './check-local-inputs.js';
import type { CliIo, OutputStream } from './io.js';
import { observedClient, observedService, type ServiceObserver } from './observed-service.js';
import { resolveDesiredFile, resolveSettings, type ServiceOptions } from './shared-options.js';

export interface LoadedDesiredState {
  readonly desired: DesiredState;
  readonly warnings: readonly Diagnostic[];
  readonly fileHash: string;
  /** The desired file and every secret file it references (the daemon watches them). */
  readonly watchFiles: string[];
}

export interface SyncOptions {
  readonly dryRun: boolean;
  readonly rotatePasswords?: boolean;
  readonly pruneAll?: boolean;
  readonly allowEmptyPrune?: boolean;
  readonly onResult?: (result: ChangeResult) => void;
  /** Shown the plan before anything is written; false cancels (see runSync). */
  readonly beforeApply?: (plan: Plan) => Promise<boolean>;
  /** Told of every page listed and every write started (the live output). */
  readonly observer?: ServiceObserver;
}

export interface ContextOverrides {
  readonly logger?: Logger;
  /** Where the logs go when no logger is given. @default io.stderr */
  readonly logStream?: OutputStream;
}

/** What every command that talks to the service needs, built once from flags and env. */
export interface ServiceContext {
  readonly settings: Settings;
  readonly file: string;
  readonly logger: Logger;
  loadDesired(): Promise<LoadedDesiredState>;
  /** The client, created on first use; throws UsageError without a URL or token. */
  client(): AmClient;
  /** The service; with an observer, every page listed and every write started is reported to it. */
  service(observer?: ServiceObserver): ServiceWriter;
  /** The password state file of this service (fingerprints of applied passwords). */
  passwordState(): Promise<PasswordState>;
  /** Where apikey tokens go, when `tokensDir` is set. */
  tokenSink(): TokenSink | undefined;
  sync(desired: DesiredState, options: SyncOptions): Promise<SyncOutcome>;
  close(): void;
}

export const noUrlMessage =
  'no service URL: set --url or AMSYNC_URL. To try amsync without a service, run `amsync demo`, or start the emulator with `amsync emulator --port 0 --token dev` and point --url at it';

export async function createServiceContext(opts: ServiceOptions, io: Pick<CliIo, 'env' | 'stderr'>, overrides: ContextOverrides = {}): Promise<ServiceContext> {
  const env = io.env;
  const settings = await resolveSettings(opts, env);
  const file = resolveDesiredFile(opts, env);
  const logger =
    overrides.logger ??
    createLogger({ level: settings.logLevel, destination: overrides.logStream ?? io.stderr, pretty: io.stderr.isTTY === true, colorize: !env.NO_COLOR });
  let client: AmClient | undefined;

  const getClient = (): AmClient => {
    if (client) return client;
    if (!settings.url) throw new UsageError(noUrlMessage, 'no_url');
    if (!settings.token && !settings.tokenFile) {
      throw new UsageError('no bearer token: set AMSYNC_TOKEN, or AMSYNC_TOKEN_FILE / --token-file PATH (a token is never a command-line argument)', 'no_token');
    }
    checkLocalInputs(settings);
    try {
      client = createClient({
        url: settings.url,
        token: settings.token,
        tokenFile: settings.tokenFile,
        timeoutMs: settings.http.timeoutMs,
        caFile: settings.http.caFile,
        allowInsecureHttp: settings.http.allowInsecureHttp,
        rate: settings.rate,
        initialRate: settings.initialRate,
        concurrency: settings.concurrency,
        pageSize: settings.pageSize,
        retry: settings.retry,
      });
    } catch (error) {
      // A URL amsync will not use (plain http to another host), a CA file it cannot read:
      // the command line or the settings are wrong, nothing was sent.
      if (error instanceof ClientConfigError) throw new UsageError(error.message, error.code, { cause: error });
      throw error;
    }
    attachClientLogging(client, logger);
    return client;
  };

  const serviceFor = (observer?: ServiceObserver): ServiceWriter =>
    observer ? observedService(clientService(observedClient(getClient(), observer)), observer) : clientService(getClient());
  const passwordState = () => openPasswordState({ path: resolve(settings.stateFile), serviceUrl: settings.url!, keyFromEnv: env.AMSYNC_STATE_KEY });
  const tokenSink = () => (settings.tokensDir ? new TokenSink(resolve(settings.tokensDir)) : undefined);

  return {
    settings,
    file,
    logger,
    async loadDesired() {
      const loaded = await loadDesired(file, env);
      return {
        desired: loaded.value,
        warnings: loaded.warnings,
        fileHash: loaded.fileHash,
        watchFiles: [resolve(file), ...secretFilesOf(loaded.value)],
      };
    },
    client: getClient,
    service: serviceFor,
    passwordState,
    tokenSink,
    async sync(desired, options) {
      const service = serviceFor(options.observer);
      return runSync({
        desired,
        service,
        passwordState: await passwordState(),
        rotatePasswords: options.rotatePasswords,
        pruneAll: options.pruneAll,
        maxDeletes: settings.maxDeletes,
        allowEmptyPrune: options.allowEmptyPrune,
        dryRun: options.dryRun,
        tokenSink: tokenSink(),
        onResult: options.onResult,
        beforeApply: options.beforeApply,
      });
    },
    close() {
      client?.close();
    },
  };
}

/** Requests at debug, retries and throttles at info: what an operator wants to see. */
function attachClientLogging(client: AmClient, logger: Logger): void {
  const log = logger.child({ component: 'client' });
  client.events.on('request', (e) => log.debug({ method: e.method, route: e.route, status: e.status, error: e.error, durationMs: Math.round(e.durationMs), attempt: e.attempt, rate: e.rate }, 'request'));
  client.events.on('retry', (e) => log.info({ method: e.method, route: e.route, status: e.status, reason: e.reason, attempt: e.attempt, delayMs: Math.round(e.delayMs) }, 'retrying'));
  client.events.on('throttle', (e) => log.info({ route: e.route, status: e.status, rate: e.rate, previousRate: e.previousRate, pauseMs: e.pauseMs }, 'service pushed back; slowing down'));
  client.events.on('token', (e) => log.info({ changed: e.changed }, 'token file re-read after 401'));
}
