import type { SecretValue } from '../model/secret-value.js';
import { AdaptiveLimiter, defaultConcurrency, type LimiterView } from './adaptive-limiter.js';
import { checkBaseUrl } from './base-url.js';
import { ClientConfigError } from './client-config-error.js';
import { createClientEvents, type ClientEvents } from './client-events.js';
import { RequestExecutor } from './request-executor.js';
import { Resource } from './resource.js';
import { apikeys, sshUsers } from './resource-definitions.js';
import { defaultRetryOptions, type RetryOptions } from './retry-policy.js';
import { systemTimers, type Timers } from './timers.js';
import { TokenProvider } from './token-provider.js';
import { Transport } from './transport.js';
import type {
  ApiApikey,
  ApikeyChanges,
  ApikeyPage,
  ApiSshUser,
  NewApikey,
  NewSshUser,
  SshUserChanges,
  SshUserPage,
} from './types.js';
import { defaultUserAgent } from './user-agent.js';

export interface ClientOptions {
  /** Base URL of the service (`--url`, AMSYNC_URL); https, or http on loopback. */
  readonly url: string;
  /** Bearer token (AMSYNC_TOKEN). */
  readonly token?: SecretValue;
  /** File holding the bearer token (AMSYNC_TOKEN_FILE); re-read once on a 401. */
  readonly tokenFile?: string;
  /** Per attempt, connection included. @default 30_000 */
  readonly timeoutMs?: number;
  /** PEM file of a private CA, added to the trusted ones (verification always stays on). */
  readonly caFile?: string;
  /** Allow plain http to a host that is not loopback. @default false */
  readonly allowInsecureHttp?: boolean;
  /** Ceiling in requests per second (`--rate`, the server's known limit); the limiter starts there. */
  readonly rate?: number;
  /** Start rate without a ceiling, for calls that queue up. @default 10 */
  readonly initialRate?: number;
  /** Requests in flight at most (`--concurrency`): a ceiling; below it, rate × round trip. @default 64 */
  readonly concurrency?: number;
  /** `size` of each list page (`--page-size`). @default 100 */
  readonly pageSize?: number;
  /** Bound on the pages of one listing. @default 100_000 */
  readonly maxPages?: number;
  readonly retry?: Partial<RetryOptions>;
  /** Randomness of the backoff jitter. @default Math.random */
  readonly random?: () => number;
  /** @default `amsync/<version>` */
  readonly userAgent?: string;
  /** Clock and timers (tests). @default the system's */
  readonly timers?: Timers;
}

/** The service client: one per service, one limiter and one got instance inside. */
export interface AmClient {
  /** `request`, `retry`, `throttle`, `token` (see client-events.ts). */
  readonly events: ClientEvents;
  readonly limiter: LimiterView;

  listSshUsers(): AsyncIterable<SshUserPage>;
  /** Every SSH user, or ListingIncompleteError: never a partial list. */
  listAllSshUsers(): Promise<ApiSshUser[]>;
  fetchSshUser(id: number): Promise<ApiSshUser>;
  /** undefined: accepted for later (202); the next listing confirms it. */
  createSshUser(body: NewSshUser): Promise<ApiSshUser | undefined>;
  updateSshUser(id: number, changes: SshUserChanges): Promise<ApiSshUser | undefined>;
  deleteSshUser(id: number): Promise<void>;

  listApikeys(): AsyncIterable<ApikeyPage>;
  listAllApikeys(): Promise<ApiApikey[]>;
  fetchApikey(id: number): Promise<ApiApikey>;
  createApikey(body: NewApikey): Promise<ApiApikey | undefined>;
  updateApikey(id: number, changes: ApikeyChanges): Promise<ApiApikey | undefined>;
  deleteApikey(id: number): Promise<void>;

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
  const retry = options.retry ?? {};
  check('retry.maxAttempts', retry.maxAttempts, countingNumber, 'an integer from 1 upwards');
  for (const key of ['maxElapsedMs', 'baseDelayMs', 'maxDelayMs', 'maxRetryAfterMs'] as const) {
    check(`retry.${key}`, retry[key], (value) => Number.isFinite(value) && value >= 0, 'a number from 0 upwards');
  }
}

/** Builds a client. Throws ClientConfigError for a bad URL or option; sends nothing. */
export function createClient(options: ClientOptions): AmClient {
  checkOptions(options);
  const baseUrl = checkBaseUrl(options.url, options.allowInsecureHttp ?? false);
  const timers = options.timers ?? systemTimers;
  const concurrency = options.concurrency ?? defaultConcurrency;
  const transport = new Transport({
    baseUrl,
    timeoutMs: options.timeoutMs ?? 30_000,
    ...(options.caFile === undefined ? {} : { caFile: options.caFile }),
    userAgent: options.userAgent ?? defaultUserAgent,
    maxSockets: concurrency,
  });
  const limiter = new AdaptiveLimiter({
    ...(options.rate === undefined ? {} : { rate: options.rate }),
    ...(options.initialRate === undefined ? {} : { initialRate: options.initialRate }),
    concurrency,
    timers,
  });
  const events = createClientEvents();
  const executor = new RequestExecutor({
    transport,
    limiter,
    tokens: new TokenProvider({
      ...(options.token === undefined ? {} : { token: options.token }),
      ...(options.tokenFile === undefined ? {} : { tokenFile: options.tokenFile }),
    }),
    events,
    timers,
    retry: { ...defaultRetryOptions, ...options.retry, random: options.random ?? Math.random },
  });
  const settings = { pageSize: options.pageSize ?? 100, maxPages: options.maxPages ?? 100_000 };
  const users = new Resource(sshUsers, executor, settings);
  const keys = new Resource(apikeys, executor, settings);

  return {
    events,
    limiter,
    listSshUsers: () => users.list(),
    listAllSshUsers: () => users.listAll(),
    fetchSshUser: (id) => users.fetch(id),
    createSshUser: (body) => users.create(body),
    updateSshUser: (id, changes) => users.update(id, changes),
    deleteSshUser: (id) => users.delete(id),
    listApikeys: () => keys.list(),
    listAllApikeys: () => keys.listAll(),
    fetchApikey: (id) => keys.fetch(id),
    createApikey: (body) => keys.create(body),
    updateApikey: (id, changes) => keys.update(id, changes),
    deleteApikey: (id) => keys.delete(id),
    close: () => {
      executor.close();
      limiter.close();
      transport.close();
    },
  };
}
