import type { AccessService, ApikeyChanges, ActualSshUser, ListedApikey, NewApikey, NewSshUser, SecretValue, SshUserChanges } from '../model/index.js';
import { apikeyKind, listedItem } from '../model/index.js';
import { AdaptiveLimiter, defaultConcurrency, type LimiterView } from './adaptive-limiter.js';
import { checkBaseUrl } from './base-url.js';
import { checkCaFile } from './ca-file.js';
import { ClientConfigError } from './client-config-error.js';
import { createClientEvents, type ClientEvents } from './client-events.js';
import { RequestExecutor } from './request-executor.js';
import { Resource } from './resource.js';
import { callSignals, type RunSignals } from './run-signals.js';
import { apikeys, sshUsers } from './resource-definitions.js';
import { defaultRetryOptions, type RetryOptions } from './retry-policy.js';
import { systemTimers, type Timers } from '../time/index.js';
import type { BearerSource } from './bearer-source.js';
import type { CredentialError } from './credential-error.js';
import { IntegratorKeyProvider, type IntegratorKeyStore, type WriteBackStatus } from './integrator-key-provider.js';
import { fetchUserInfo, listAllRoles, type ApiRole, type ApiUserInfo } from './service-info.js';
import { tokenExchangeCall, type TokenAnswer } from './token-exchange.js';
import { TokenProvider } from './token-provider.js';
import { Transport } from './transport.js';
import type { ApikeyPage, SshUserPage } from './types.js';
import { defaultUserAgent } from './user-agent.js';
import { WriteFences, type WriteFence } from './write-fence.js';

export interface ClientOptions {
  /** Base URL of the service (`--url`, AMSYNC_URL); https, or http on loopback. */
  readonly url: string;
  /** Bearer token (AMSYNC_TOKEN). */
  readonly token?: SecretValue;
  /** File holding the bearer token (AMSYNC_TOKEN_FILE); re-read once on a 401. */
  readonly tokenFile?: string;
  /**
   * The integrator key, a refresh token (AMSYNC_REFRESH_TOKEN): exchanged for access tokens,
   * which are renewed before they expire. Not together with `token` or `tokenFile`.
   */
  readonly refreshToken?: SecretValue;
  /** A file holding the integrator key (AMSYNC_REFRESH_TOKEN_FILE); a rotated key is written back to it. */
  readonly refreshTokenFile?: string;
  /** Somewhere else holding the integrator key (a Kubernetes Secret: integratorKeySecret), read and written back as the file is. */
  readonly integratorKeyStore?: IntegratorKeyStore;
  /**
   * A key the service rotated that cannot be written back (or came from AMSYNC_REFRESH_TOKEN):
   * false, the call that got it fails with `integrator_key_not_persisted` and so does every call
   * after it (a one-shot run, which would end with a key nobody has); true, it is used from
   * memory and `credentialStatus()` says so (the daemon, which lives on and turns not ready).
   * @default false
   */
  readonly keepUnpersistedKey?: boolean;
  /**
   * The credential of the client this one replaces (the daemon's settings reload), from its
   * handOverCredential(): an integrator key for the same service and the same key (file) is
   * taken over as it stands — a rotated key only memory holds, the access token — instead of
   * being read again from a file that may hold a retired one. Otherwise ignored.
   */
  readonly credentialFrom?: CredentialHandover;
  /** Per attempt, connection included. @default 30_000 */
  readonly timeoutMs?: number;
  /** PEM file of a private CA, added to the trusted ones (verification always stays on). */
  readonly caFile?: string;
  /** Where caFile was set, for its errors (a fleet target's key); default: the flag, variable and settings key. */
  readonly caFileOrigin?: string;
  /** Allow plain http to a host that is not loopback. @default false */
  readonly allowInsecureHttp?: boolean;
  /** Ceiling in requests per second (`--rate`, the server's known limit); the limiter starts there. */
  readonly rate?: number;
  /** Start rate without a ceiling, for calls that queue up. @default 10 */
  readonly initialRate?: number;
  /** Requests in flight at most (`--concurrency`): a ceiling; below it, rate × round trip. @default 64 */
  readonly concurrency?: number;
  /**
   * The largest page asked for (`--page-size`): a ceiling. Listings learn the service's own
   * largest page from the first short page that is not the last, and ask for that. @default 1000
   */
  readonly pageSize?: number;
  /** A listing that takes longer is incomplete. @default 300_000 (5 minutes) */
  readonly listDeadlineMs?: number;
  /** Bound on the pages of one listing. @default 100_000 */
  readonly maxPages?: number;
  /** Largest answer body read, in bytes (decompressed); a larger one is an error. @default 33_554_432 (32 MiB) */
  readonly maxResponseBytes?: number;
  readonly retry?: Partial<RetryOptions>;
  /** Randomness of the backoff jitter. @default Math.random */
  readonly random?: () => number;
  /** @default `amsync/<version>` */
  readonly userAgent?: string;
  /** Clock and timers (tests). @default the system's */
  readonly timers?: Timers;
}

/**
 * The service client: one per service, one limiter and one got instance inside. It is the
 * AccessService the rest of amsync uses (items in the model's types, normalised and listed
 * once here), plus the pages of a listing for what streams them (export) and what only a
 * client has: events, the limiter, cancellation, the credential.
 */
export interface AmClient extends AccessService {
  /** `request`, `retry`, `throttle`, `token`, `page`, `credential` (see client-events.ts). */
  readonly events: ClientEvents;
  readonly limiter: LimiterView;

  /** The pages of the SSH users listing, as they arrive. */
  sshUserPages(): AsyncIterable<SshUserPage>;
  /** The pages of the apikeys listing, as they arrive. */
  apikeyPages(): AsyncIterable<ApikeyPage>;
  listRoles(): Promise<ApiRole[] | null>;
  userInfo(): Promise<ApiUserInfo | null>;

  /**
   * The same client (one limiter, one connection pool) whose calls all carry `signal`: once it
   * aborts, nothing more is sent, requests in flight are aborted and retries stop, each call
   * failing with ApiError `cancelled`. The daemon gives each run one.
   */
  withSignal(signal: AbortSignal): AmClient;
  /**
   * The same client whose calls stop short of the wire once `stop` fires (an interrupt, a
   * daemon stopping): calls waiting in the limiter, for a retry or for their turn leave at once
   * (ApiError `not_sent` when none of their attempts went out), no retry starts, and requests
   * already sent are let finish, their answers standing. Combines with withSignal.
   */
  withStop(stop: AbortSignal): AmClient;
  /** Requests sent and not answered yet (all views of this client): what an interrupt lets finish. */
  onWire(): number;
  /**
   * Adds a check every write request of this client (and of its withSignal views) must pass
   * right before it is sent: a held writer lock's or Lease's. A fence that throws keeps the
   * write off the wire and fails its call with what it threw. Returns the fence's removal.
   */
  fenceWrites(fence: WriteFence): () => void;
  /** With an integrator key: whether its last rotation reached its file. undefined otherwise. */
  credentialStatus(): { readonly writeBack: WriteBackStatus } | undefined;
  /**
   * The end of a one-shot run, before close(): waits up to `maxWaitMs` for a renewal of the
   * integrator key in flight (the run's last request may have started one beside it), and
   * returns CredentialError `integrator_key_not_persisted` when a key the service rotated could
   * not be kept (or the renewal was still unanswered). undefined otherwise, and without a key.
   */
  settleCredential(maxWaitMs: number): Promise<CredentialError | undefined>;
  /**
   * Before this client is replaced (the daemon's settings reload) and closed: waits up to
   * `maxWaitMs` for a renewal in flight (its answer may carry a rotated key), then hands the
   * integrator key over for ClientOptions.credentialFrom. undefined without a key.
   */
  handOverCredential(maxWaitMs: number): Promise<CredentialHandover | undefined>;

  /** Frees sockets and timers; calls not yet sent fail. */
  close(): void;
}

function check(name: string, value: number | undefined, test: (value: number) => boolean, expected: string): void {
  if (value !== undefined && !test(value)) {
    throw new ClientConfigError('invalid_option', `Expected \`${name}\` to be ${expected}, got ${String(value)}`);
  }
}

const positive = (value: number): boolean => Number.isFinite(value) && value > 0;
const countingNumber = (value: number): boolean => Number.isSafeInteger(value) && value >= 1;

function checkOptions(options: ClientOptions): void {
  check('timeoutMs', options.timeoutMs, positive, 'a number above 0');
  check('rate', options.rate, positive, 'a number above 0');
  check('initialRate', options.initialRate, positive, 'a number above 0');
  check('concurrency', options.concurrency, countingNumber, 'an integer from 1 upwards');
  check('pageSize', options.pageSize, countingNumber, 'an integer from 1 upwards');
  check('maxPages', options.maxPages, countingNumber, 'an integer from 1 upwards');
  check('maxResponseBytes', options.maxResponseBytes, countingNumber, 'an integer from 1 upwards');
  check('listDeadlineMs', options.listDeadlineMs, positive, 'a number above 0');
  const retry = options.retry ?? {};
  check('retry.maxAttempts', retry.maxAttempts, countingNumber, 'an integer from 1 upwards');
  for (const key of ['maxElapsedMs', 'maxConnectElapsedMs', 'baseDelayMs', 'maxDelayMs', 'maxRetryAfterMs'] as const) {
    check(`retry.${key}`, retry[key], (value) => Number.isFinite(value) && value >= 0, 'a number from 0 upwards');
  }
}

function integratorKeyProvider(
  options: ClientOptions,
  url: string,
  timers: Timers,
  events: ClientEvents,
  exchange: (key: string, stop?: AbortSignal, onSent?: (at: number) => void) => Promise<TokenAnswer>,
): IntegratorKeyProvider | undefined {
  const keys = [options.refreshToken, options.refreshTokenFile, options.integratorKeyStore].filter((k) => k !== undefined).length;
  if (keys === 0) return undefined;
  if (options.token !== undefined || options.tokenFile !== undefined || keys > 1) {
    throw new ClientConfigError('invalid_option', 'Expected one credential: a token, a token file, an integrator key or an integrator key file, got more than one');
  }
  const source = {
    ...(options.refreshToken === undefined ? {} : { key: options.refreshToken }),
    ...(options.refreshTokenFile === undefined ? {} : { keyFile: options.refreshTokenFile }),
    ...(options.integratorKeyStore === undefined ? {} : { store: options.integratorKeyStore }),
  };
  const deps = { exchange, now: () => timers.now(), events, keepUnpersistedKey: options.keepUnpersistedKey === true };
  const previous = options.credentialFrom;
  if (previous !== undefined && previous.url === url && previous.provider.serves(source)) {
    previous.provider.rebind(deps);
    return previous.provider;
  }
  return new IntegratorKeyProvider(source, deps);
}

/** An integrator key one client hands over to the client that replaces it (opaque). */
export interface CredentialHandover {
  readonly url: string;
  readonly provider: IntegratorKeyProvider;
}

/** Builds a client. Throws ClientConfigError for a bad URL, option or CA file; sends nothing. */
export function createClient(options: ClientOptions): AmClient {
  checkOptions(options);
  const baseUrl = checkBaseUrl(options.url, options.allowInsecureHttp ?? false);
  if (options.caFile !== undefined) checkCaFile(options.caFile, options.caFileOrigin);
  const timers = options.timers ?? systemTimers;
  const concurrency = options.concurrency ?? defaultConcurrency;
  const transport = new Transport({
    baseUrl,
    timeoutMs: options.timeoutMs ?? 30_000,
    ...(options.caFile === undefined ? {} : { caFile: options.caFile }),
    userAgent: options.userAgent ?? defaultUserAgent,
    maxSockets: concurrency,
    maxResponseBytes: options.maxResponseBytes ?? defaultMaxResponseBytes,
  });
  const limiter = new AdaptiveLimiter({
    ...(options.rate === undefined ? {} : { rate: options.rate }),
    ...(options.initialRate === undefined ? {} : { initialRate: options.initialRate }),
    concurrency,
    timers,
  });
  const events = createClientEvents();
  const fences = new WriteFences();
  // The integrator key's exchanges are calls like any other: same limiter, same retry policy.
  const wired: { executor?: RequestExecutor } = {};
  const integratorKey = integratorKeyProvider(options, baseUrl.href, timers, events, (key, stop, onSent) => (wired.executor as RequestExecutor).run(tokenExchangeCall(key, stop, onSent)));
  const tokens: BearerSource =
    integratorKey ??
    new TokenProvider({
      ...(options.token === undefined ? {} : { token: options.token }),
      ...(options.tokenFile === undefined ? {} : { tokenFile: options.tokenFile }),
    });
  const executor = new RequestExecutor({
    target: { url: baseUrl, ...(options.caFile === undefined ? {} : { caFile: options.caFile }) },
    transport,
    limiter,
    tokens,
    events,
    timers,
    retry: { ...defaultRetryOptions, ...options.retry, random: options.random ?? Math.random },
    fences,
  });
  wired.executor = executor;
  const settings = {
    pageSize: options.pageSize ?? 1000,
    maxPages: options.maxPages ?? 100_000,
    listDeadlineMs: options.listDeadlineMs ?? 300_000,
    timers,
    events,
  };
  const users = new Resource(sshUsers, executor, settings);
  const keys = new Resource(apikeys, executor, settings);
  const close = (): void => {
    executor.close();
    limiter.close();
    transport.close();
  };
  return clientOf(users, keys, {
    events,
    limiter,
    close,
    listRoles: (signals) => listAllRoles(executor, settings, signals),
    userInfo: (signals) => fetchUserInfo(executor, signals),
    onWire: () => executor.onWire,
    credentialStatus: () => (integratorKey === undefined ? undefined : { writeBack: integratorKey.writeBack }),
    settleCredential: (maxWaitMs) => (integratorKey === undefined ? Promise.resolve(undefined) : settleWithin(integratorKey, timers, maxWaitMs)),
    handOverCredential: async (maxWaitMs) => {
      if (integratorKey === undefined) return undefined;
      await settleWithin(integratorKey, timers, maxWaitMs);
      return { url: baseUrl.href, provider: integratorKey };
    },
    fenceWrites: (fence) => fences.add(fence),
  });
}

/** The key's state once its renewal in flight settled, waiting on the client's clock at most `maxWaitMs`. */
async function settleWithin(key: IntegratorKeyProvider, timers: Timers, maxWaitMs: number): Promise<CredentialError | undefined> {
  let handle: unknown;
  const bound = new Promise<void>((resolve) => {
    handle = timers.setTimeout(resolve, maxWaitMs);
  });
  try {
    return await key.settled(bound);
  } finally {
    timers.clearTimeout(handle);
  }
}

/** 32 MiB: a page of 1,000 apikeys is about 300 KB; nothing the service sends comes near it. */
export const defaultMaxResponseBytes = 32 * 1024 * 1024;

/** What does not depend on a run's signal: one limiter, one pool, the credential, roles and scopes. */
interface SharedParts extends Pick<AmClient, 'events' | 'limiter' | 'close' | 'credentialStatus' | 'settleCredential' | 'handOverCredential' | 'fenceWrites' | 'onWire'> {
  /** The service-wide reads, with what each call of the run carries (none: the client's own calls). */
  readonly listRoles: (signals: RunSignals) => Promise<ApiRole[] | null>;
  readonly userInfo: (signals: RunSignals) => Promise<ApiUserInfo | null>;
}

function clientOf(
  users: Resource<ActualSshUser, NewSshUser, SshUserChanges>,
  keys: Resource<ListedApikey, NewApikey, ApikeyChanges>,
  shared: SharedParts,
  run: RunSignals = {},
): AmClient {
  const calls = callSignals(run);
  return {
    events: shared.events,
    limiter: shared.limiter,
    close: shared.close,
    credentialStatus: shared.credentialStatus,
    settleCredential: shared.settleCredential,
    handOverCredential: shared.handOverCredential,
    fenceWrites: shared.fenceWrites,
    onWire: shared.onWire,
    listRoles: () => shared.listRoles(calls),
    userInfo: () => shared.userInfo(calls),
    sshUserPages: () => users.list(),
    listSshUsers: () => users.listAll(),
    fetchSshUser: (id) => users.fetch(id),
    createSshUser: (body) => users.create(body),
    updateSshUser: (id, changes) => users.update(id, changes),
    deleteSshUser: (id) => users.delete(id),
    apikeyPages: () => keys.list(),
    listApikeys: (options) => keys.listAll(options?.tokens === false ? withoutToken : undefined),
    fetchApikey: (id) => keys.fetch(id),
    createApikey: (body) => keys.create(body),
    updateApikey: (id, changes) => keys.update(id, changes),
    deleteApikey: (id) => keys.delete(id),
    withSignal: (signal) => clientOf(users.withSignal(signal), keys.withSignal(signal), shared, { ...run, signal }),
    withStop: (stop) => clientOf(users.withStop(stop), keys.withStop(stop), shared, { ...run, stop }),
  };
}

/** A listed key without its token, for a caller with no use for tokens (no token sink). */
function withoutToken(key: ListedApikey): ListedApikey {
  return key.token === undefined ? key : listedItem(apikeyKind, key);
}
