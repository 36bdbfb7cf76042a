import { randomBytes } from 'node:crypto';
import type { ApiDeps } from './api-handler.js';
import { replaceTokens, tokenSettingsSchema, type TokenSets } from './auth.js';
import { AsyncWriteQueue } from './async-writes.js';
import { EmulatorError, EmulatorSeedError } from './errors.js';
import { FaultController } from './faults.js';
import { Holds, type HeldRequest } from './holds.js';
import { createRequestHandler, type RequestHandler } from './http-server.js';
import { OAuthIssuer, type OAuthStats } from './oauth.js';
import type { ResolvedOptions } from './options.js';
import { DataFilePersister } from './persistence.js';
import { RequestLog } from './request-log.js';
import { createRng } from './rng.js';
import { issuesToErrors, seedSchema } from './seed-schema.js';
import { Store, type StoreData } from './store.js';
import { createTokenSource } from './token-source.js';
import type { EmulatorStateSnapshot, FaultRuleStats, FaultSettings, RequestLogEntry, SeedData, SeedResult, TokenSettings } from './types.js';

/** The control of one service (a lone emulator, or one tenant): what the control API offers, in-process. */
export interface EmulatorControl {
  requests(): RequestLogEntry[];
  clearRequests(): void;
  reset(): void;
  /** Adds items under the API's rules, all or none; throws EmulatorSeedError otherwise. */
  seed(data: SeedData): SeedResult;
  state(): EmulatorStateSnapshot;
  /** Changes fault settings; `rules`, when given, replaces the rules. Throws on bad settings. */
  setFaults(f: Partial<FaultSettings>): void;
  faults(): FaultSettings & { ruleStats: FaultRuleStats[] };
  /** Rotates tokens at run time: each list given replaces its set. Throws on a bad token. */
  setTokens(t: TokenSettings): void;
  /** API requests arrived and not answered yet (delayed ones included). */
  inFlight(): number;
  /** Requests a `hold` fault rule keeps waiting now. */
  held(): HeldRequest[];
  /** Resolves with the held requests once one is held (a test then kills its client). */
  whenHeld(): Promise<HeldRequest[]>;
  /** Releases every held request; returns how many. */
  releaseHeld(): number;
  /** The token endpoint's settings and counters (never a token). */
  oauth(): OAuthStats;
  /** A new integrator key, as made in the service's UI (it enables the token endpoint). */
  addRefreshToken(token: string): void;
  /** Revokes the integrator key `token` descends from, rotated tokens included; false when unknown. */
  revokeRefreshToken(token: string): boolean;
  /** Whether the token endpoint would take this refresh token now (no exchange is made, nothing counted). */
  refreshTokenAccepted(token: string): boolean;
  /**
   * Labels bearer tokens (token -> label; replaces earlier labels): each logged request that
   * carries one names it as its `client`, so a test tells apart processes given different tokens.
   */
  setClientLabels(labels: Readonly<Record<string, string>>): void;
}

/** What every service of one server shares: the options, the timers and whether it is closing. */
export interface InstanceEnvironment {
  readonly options: ResolvedOptions;
  /** A timer the server cancels on close (latency, delayed answers). */
  sleep(ms: number): Promise<void>;
  isClosed(): boolean;
}

/** One service's own part: where it sits, its fault seed, its starting state and where it persists. */
export interface InstanceSetup {
  /** '' for a lone emulator, `/t/<name>` for a tenant. */
  readonly pathPrefix: string;
  readonly seed: number;
  /** The data file's content to start from, if any (copied, never shared). */
  readonly initialData: StoreData | null;
  /** Write the state here after every write; undefined keeps it in memory. */
  readonly persistTo: string | undefined;
}

/** One service: the request handler, its control, and what to do when the server closes. */
export interface Instance {
  readonly handle: RequestHandler;
  readonly control: EmulatorControl;
  /** Drops pending async writes (the server is closing). */
  dropPending(): void;
  /** Resolves once writes to the data file in flight are done. */
  flush(): Promise<void>;
}

/**
 * Builds one service's state (store, tokens, oauth, faults and rate limit, request log, async
 * writes, persistence) and its request handler. Synchronous and small, so a server with many
 * tenants can build each one on its first request.
 */
export function createInstance(env: InstanceEnvironment, setup: InstanceSetup): Instance {
  const parts = instanceParts(env, setup);
  const o = env.options;
  const handle = createRequestHandler({
    control: o.control,
    pathPrefix: setup.pathPrefix,
    tokens: parts.tokens,
    oauth: parts.oauth,
    faults: parts.faults,
    holds: parts.holds,
    log: parts.log,
    traffic: parts.traffic,
    clientLabels: parts.clientLabels,
    api: apiDeps(parts, env, setup),
    controlDeps: { ...parts, pathPrefix: setup.pathPrefix },
    sleep: env.sleep,
    isClosed: env.isClosed,
    onError: o.onError,
  });
  return {
    handle,
    control: controlOf(parts),
    dropPending: () => {
      parts.queue.clear();
      parts.holds.releaseAll();
    },
    flush: async () => {
      await parts.persister?.flush();
    },
  };
}

/** Everything one service keeps, and the operations the API and the control API share. */
interface InstanceParts {
  readonly store: Store;
  readonly oauth: OAuthIssuer;
  readonly faults: FaultController;
  readonly holds: Holds;
  readonly log: RequestLog;
  readonly queue: AsyncWriteQueue;
  readonly tokens: TokenSets;
  readonly traffic: { inFlight: number };
  readonly clientLabels: Map<string, string>;
  readonly rng: () => number;
  readonly persister: DataFilePersister | null;
  persist(): Promise<void>;
  persistInBackground(): void;
  reset(): void;
  seed(data: SeedData): SeedResult;
  state(): EmulatorStateSnapshot;
}

function instanceParts(env: InstanceEnvironment, setup: InstanceSetup): InstanceParts {
  const o = env.options;
  const rng = createRng(setup.seed);
  const store = new Store({ now: () => new Date(o.clock()), newToken: createTokenSource(), passwordPepper: randomBytes(16).toString('hex') }, o.roles);
  const oauth = new OAuthIssuer(
    { refreshTokens: o.refreshTokens, accessTokenTtlSeconds: o.accessTokenTtlSeconds, rotate: o.rotateRefreshTokens, graceSeconds: o.refreshTokenGraceSeconds, pathPrefix: setup.pathPrefix },
    o.clock,
  );
  if (setup.initialData) store.importData(setup.initialData);
  const faults = faultControllerOf(o, rng);
  const persister = setup.persistTo === undefined ? null : new DataFilePersister(setup.persistTo, () => store.exportData());
  const persist = (): Promise<void> => (persister ? persister.persist() : Promise.resolve());
  const persistInBackground = () => {
    persist().catch(o.onError);
  };
  const queue = new AsyncWriteQueue(Date.now, persistInBackground);
  // Each service its own sets: rotating or expiring a token in one leaves the others alone.
  const tokens: TokenSets = { readWrite: new Set(o.tokens), readOnly: new Set(o.readOnlyTokens), expired: new Set(o.expiredTokens), issued: oauth };
  return {
    store,
    oauth,
    faults,
    holds: new Holds(),
    log: new RequestLog(),
    queue,
    tokens,
    traffic: { inFlight: 0 },
    clientLabels: new Map(),
    rng,
    persister,
    persist,
    persistInBackground,
    reset: () => {
      queue.clear();
      store.reset();
    },
    seed: (data) => {
      const parsed = seedSchema.safeParse(data);
      if (!parsed.success) throw new EmulatorSeedError(issuesToErrors(parsed.error));
      const result = store.seed(parsed.data);
      if (!result.ok) throw new EmulatorSeedError(result.errors);
      return result.value;
    },
    state: () => ({ ...store.snapshot(), pendingWrites: queue.size }),
  };
}

function faultControllerOf(o: InstanceEnvironment['options'], rng: () => number): FaultController {
  try {
    return new FaultController(o.faults, rng, o.faultClock);
  } catch (error) {
    throw new EmulatorError('emulator_options', (error as Error).message, { cause: error });
  }
}

function apiDeps(parts: InstanceParts, env: InstanceEnvironment, setup: InstanceSetup): ApiDeps {
  const { store, faults, queue } = parts;
  return {
    store,
    pathPrefix: setup.pathPrefix,
    pageSizeDefault: env.options.pageSizeDefault,
    pageSizeMax: env.options.pageSizeMax,
    asyncWrites: () => faults.current.asyncWrites,
    enqueue: (item, apply) => queue.enqueue(item, faults.current.asyncDelayMs, apply),
    pendingFor: (item) => queue.pendingFor(item),
    persist: parts.persist,
    random: parts.rng,
  };
}

/** The control API of one service, as tests and the CLI call it in-process. */
function controlOf(parts: InstanceParts): EmulatorControl {
  const { log, faults, tokens, oauth } = parts;
  return {
    requests: () => log.list(),
    clearRequests: () => log.clear(),
    reset: () => {
      parts.reset();
      parts.persistInBackground();
    },
    seed: (data) => {
      const result = parts.seed(data);
      parts.persistInBackground();
      return result;
    },
    state: parts.state,
    setFaults: (f) => {
      faults.update(f);
    },
    faults: () => ({ ...faults.current, ruleStats: faults.stats }),
    setTokens: (t) => {
      const parsed = tokenSettingsSchema.safeParse(t);
      if (!parsed.success) throw new EmulatorError('emulator_options', 'Expected `tokens`, `readOnlyTokens` and `expiredTokens` to be arrays of non-empty strings without white space');
      replaceTokens(tokens, parsed.data);
    },
    inFlight: () => parts.traffic.inFlight,
    held: () => parts.holds.list(),
    whenHeld: () => parts.holds.whenHeld(),
    releaseHeld: () => parts.holds.releaseAll(),
    oauth: () => oauth.stats(),
    addRefreshToken: (t) => {
      if (typeof t !== 'string' || !/^\S+$/.test(t)) throw new EmulatorError('emulator_options', 'Expected a refresh token: a non-empty string without white space');
      oauth.addRefreshToken(t);
    },
    revokeRefreshToken: (t) => oauth.revoke(t),
    refreshTokenAccepted: (t) => oauth.accepts(t),
    setClientLabels: (labels) => {
      parts.clientLabels.clear();
      for (const [token, label] of Object.entries(labels)) parts.clientLabels.set(token, label);
    },
  };
}
