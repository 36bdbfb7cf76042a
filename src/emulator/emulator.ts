import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApiDeps } from './api-handler.js';
import { replaceTokens, tokenSettingsSchema, type TokenSets } from './auth.js';
import { AsyncWriteQueue } from './async-writes.js';
import type { ControlDeps } from './control-handler.js';
import { EmulatorError, EmulatorSeedError } from './errors.js';
import { FaultController } from './faults.js';
import { answerProtocolEdges, createRequestListener } from './http-server.js';
import { resolveOptions, type EmulatorOptions } from './options.js';
import { DataFilePersister, loadDataFile } from './persistence.js';
import { RequestLog } from './request-log.js';
import { createRng } from './rng.js';
import { issuesToErrors, seedSchema } from './seed-schema.js';
import { Store } from './store.js';
import { OAuthIssuer, type OAuthStats } from './oauth.js';
import { createTokenSource } from './token-source.js';
import type { EmulatorStateSnapshot, FaultRuleStats, FaultSettings, RequestLogEntry, SeedData, SeedResult, TokenSettings } from './types.js';

export interface RunningEmulator {
  /** `http://HOST:PORT`, no trailing slash. */
  url: string;
  port: number;
  /** The seed of the fault generator, to replay a run. */
  seedValue: number;
  /** Stops listening, cuts open connections, drops pending async writes, flushes the data file. */
  close(): Promise<void>;
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
  /** The token endpoint's settings and counters (never a token). */
  oauth(): OAuthStats;
  /** A new integrator key, as made in the service's UI (it enables the token endpoint). */
  addRefreshToken(token: string): void;
  /** Revokes the integrator key `token` descends from, rotated tokens included; false when unknown. */
  revokeRefreshToken(token: string): boolean;
}

/** Starts an emulator on node:http; resolves once it is listening. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const o = resolveOptions(options);
  const rng = createRng(o.seed);
  const store = new Store({ now: () => new Date(o.clock()), newToken: createTokenSource(), passwordPepper: randomBytes(16).toString('hex') }, o.roles);
  const oauth = new OAuthIssuer(
    { refreshTokens: o.refreshTokens, accessTokenTtlSeconds: o.accessTokenTtlSeconds, rotate: o.rotateRefreshTokens, graceSeconds: o.refreshTokenGraceSeconds },
    o.clock,
  );
  if (o.dataFile !== undefined) {
    const data = await loadDataFile(o.dataFile);
    if (data) store.importData(data);
  }
  let faults: FaultController;
  try {
    faults = new FaultController(o.faults, rng, Date.now);
  } catch (error) {
    throw new EmulatorError('emulator_options', (error as Error).message, { cause: error });
  }
  const log = new RequestLog();
  const persister = o.dataFile === undefined ? null : new DataFilePersister(o.dataFile, () => store.exportData());
  const persist = (): Promise<void> => (persister ? persister.persist() : Promise.resolve());
  const persistInBackground = () => {
    persist().catch(o.onError);
  };
  const queue = new AsyncWriteQueue(Date.now, persistInBackground);

  let closed = false;
  const timers = new Set<NodeJS.Timeout>();
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        timers.delete(t);
        resolve();
      }, ms);
      timers.add(t);
    });

  const tokens: TokenSets = { readWrite: new Set(o.tokens), readOnly: new Set(o.readOnlyTokens), expired: new Set(o.expiredTokens), issued: oauth };
  const traffic = { inFlight: 0 };
  const api: ApiDeps = {
    store,
    pageSizeDefault: o.pageSizeDefault,
    pageSizeMax: o.pageSizeMax,
    asyncWrites: () => faults.current.asyncWrites,
    enqueue: (item, apply) => queue.enqueue(item, faults.current.asyncDelayMs, apply),
    pendingFor: (item) => queue.pendingFor(item),
    persist,
    random: rng,
  };
  const reset = () => {
    queue.clear();
    store.reset();
  };
  const seed = (data: SeedData): SeedResult => {
    const parsed = seedSchema.safeParse(data);
    if (!parsed.success) throw new EmulatorSeedError(issuesToErrors(parsed.error));
    const result = store.seed(parsed.data);
    if (!result.ok) throw new EmulatorSeedError(result.errors);
    return result.value;
  };
  const state = (): EmulatorStateSnapshot => ({ ...store.snapshot(), pendingWrites: queue.size });
  const controlDeps: ControlDeps = { store, log, faults, tokens, oauth, traffic, reset, seed, state, persist };

  const listener = createRequestListener({
    control: o.control,
    tokens,
    oauth,
    faults,
    log,
    traffic,
    api,
    controlDeps,
    sleep,
    isClosed: () => closed,
    onError: o.onError,
  });
  const server = createServer(listener);
  const edges = answerProtocolEdges(server, listener);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(new EmulatorError('emulator_listen', `Cannot listen on ${o.host}:${o.port}: ${error.code ?? error.message}`, { cause: error }));
    });
    server.listen(o.port, o.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const hostInUrl = o.host.includes(':') ? `[${o.host}]` : o.host;

  return {
    url: `http://${hostInUrl}:${port}`,
    port,
    seedValue: o.seed,
    async close() {
      if (closed) return;
      closed = true;
      queue.clear();
      for (const t of timers) clearTimeout(t);
      timers.clear();
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      edges.closeAll();
      await stopped;
      await persister?.flush();
    },
    requests: () => log.list(),
    clearRequests: () => log.clear(),
    reset: () => {
      reset();
      persistInBackground();
    },
    seed: (data) => {
      const result = seed(data);
      persistInBackground();
      return result;
    },
    state,
    setFaults: (f) => {
      faults.update(f);
    },
    faults: () => ({ ...faults.current, ruleStats: faults.stats }),
    setTokens: (t) => {
      const parsed = tokenSettingsSchema.safeParse(t);
      if (!parsed.success) throw new EmulatorError('emulator_options', 'Expected `tokens`, `readOnlyTokens` and `expiredTokens` to be arrays of non-empty strings without white space');
      replaceTokens(tokens, parsed.data);
    },
    inFlight: () => traffic.inFlight,
    oauth: () => oauth.stats(),
    addRefreshToken: (t) => {
      if (typeof t !== 'string' || !/^\S+$/.test(t)) throw new EmulatorError('emulator_options', 'Expected a refresh token: a non-empty string without white space');
      oauth.addRefreshToken(t);
    },
    revokeRefreshToken: (t) => oauth.revoke(t),
  };
}
