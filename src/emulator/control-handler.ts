import { replaceTokens, tokenCounts, tokenSettingsSchema, type TokenSets } from './auth.js';
import { EmulatorError, EmulatorSeedError } from './errors.js';
import * as z from 'zod';
import type { FaultController } from './faults.js';
import type { Holds } from './holds.js';
import type { OAuthIssuer } from './oauth.js';
import { errorReply, oneError, type Reply } from './reply.js';
import type { RequestLog } from './request-log.js';
import { checkPasswordSchema, issuesToErrors, seedSchema } from './seed-schema.js';
import type { Store } from './store.js';
import type { EmulatorStateSnapshot, SeedData, SeedResult } from './types.js';

/**
 * The control API under /_emulator/: not part of the real service. It needs no token and
 * is never subject to faults or the request log, so tests can always reach it. An emulator
 * with tenants serves one per tenant, at /t/<name>/_emulator/, on that tenant's state alone.
 *
 *   GET    /_emulator/requests[?since=SEQ]  {requests:[{seq,method,path,query,status,time,durationMs,fault?,next?,undelivered?}],
 *                                            dropped, inFlight}
 *   DELETE /_emulator/requests              clears the log
 *   POST   /_emulator/reset                 empty state (roles kept), pending writes dropped
 *   POST   /_emulator/seed                  {sshUsers?, apikeys?, count?, returnItems?} -> {sshUsers, apikeys, counts}
 *   GET    /_emulator/state                 every item; users with passwordSet/passwordVersion
 *   POST   /_emulator/check-password        {username, password} -> {match}
 *   GET    /_emulator/faults                fault settings and per-rule counters
 *   PUT    /_emulator/faults                change any subset of the settings (rules replace)
 *   GET    /_emulator/tokens                how many tokens of each kind (never the tokens)
 *   PUT    /_emulator/tokens                {tokens?, readOnlyTokens?, expiredTokens?}: each list
 *                                            given replaces its set (token rotation at run time)
 *   GET    /_emulator/held                  {held:[{seq,method,path,hold,label}]}: requests a `hold` rule keeps waiting
 *   POST   /_emulator/release               releases them all -> {released}
 *   GET    /_emulator/oauth                 the token endpoint's settings and counters (never a token)
 *   POST   /_emulator/oauth/refresh-tokens  {refreshToken}: a new integrator key
 *   POST   /_emulator/oauth/revoke          {refreshToken}: revokes its integrator key, rotated
 *                                            descendants included (404 when unknown)
 */
export interface ControlDeps {
  store: Store;
  /** '' or a tenant's `/t/<name>`: messages name the path the client sent. */
  pathPrefix: string;
  log: RequestLog;
  faults: FaultController;
  holds: Holds;
  tokens: TokenSets;
  oauth: OAuthIssuer;
  traffic: { readonly inFlight: number };
  reset(): void;
  seed(data: SeedData): SeedResult;
  state(): EmulatorStateSnapshot;
  /** Resolves once the state is persisted (a no-op in memory). */
  persist(): Promise<void>;
}

export const CONTROL_PREFIX = '/_emulator';

const refreshTokenBody = z.strictObject({ refreshToken: z.string().regex(/^\S+$/, 'a non-empty token without white space') });

export function isControlPath(path: string): boolean {
  return path === CONTROL_PREFIX || path.startsWith(`${CONTROL_PREFIX}/`);
}

const ROUTES: Record<string, readonly string[]> = {
  requests: ['GET', 'DELETE'],
  reset: ['POST'],
  seed: ['POST'],
  state: ['GET'],
  'check-password': ['POST'],
  faults: ['GET', 'PUT'],
  tokens: ['GET', 'PUT'],
  held: ['GET'],
  release: ['POST'],
  oauth: ['GET'],
  'oauth/refresh-tokens': ['POST'],
  'oauth/revoke': ['POST'],
};

export async function handleControl(method: string, path: string, query: URLSearchParams, rawBody: string, deps: ControlDeps): Promise<Reply> {
  const name = path.slice(CONTROL_PREFIX.length + 1).replace(/\/$/, '');
  const allowed = ROUTES[name];
  const shown = `${deps.pathPrefix}${path}`;
  if (allowed === undefined) return oneError(404, 'path', 'not_found', `no control API at ${shown}`);
  if (!allowed.includes(method)) return oneError(405, 'method', 'rule', `${method} is not supported on ${shown}`, { Allow: allowed.join(', ') });
  let body: unknown;
  if (method === 'POST' || method === 'PUT') {
    try {
      body = rawBody.trim() === '' ? {} : JSON.parse(rawBody);
    } catch (error) {
      return oneError(400, 'body', 'invalid', `malformed JSON: ${(error as Error).message}`);
    }
  }
  switch (`${method} ${name}`) {
    case 'GET requests': {
      const since = Number(query.get('since') ?? '0');
      return { status: 200, body: { requests: deps.log.list(Number.isFinite(since) ? since : 0), dropped: deps.log.dropped, inFlight: deps.traffic.inFlight } };
    }
    case 'DELETE requests':
      deps.log.clear();
      return { status: 200, body: {} };
    case 'POST reset':
      deps.reset();
      await deps.persist();
      return { status: 200, body: {} };
    case 'POST seed': {
      const reply = seed(body, deps);
      if (reply.status === 200) await deps.persist();
      return reply;
    }
    case 'GET state':
      return { status: 200, body: deps.state() };
    case 'POST check-password': {
      const parsed = checkPasswordSchema.safeParse(body);
      if (!parsed.success) return errorReply(400, issuesToErrors(parsed.error));
      const result = deps.store.checkPassword(parsed.data.username, parsed.data.password);
      return result.ok ? { status: 200, body: result.value } : errorReply(result.status, result.errors);
    }
    case 'GET faults':
      return { status: 200, body: faultsBody(deps.faults) };
    case 'PUT faults':
      try {
        deps.faults.update(body);
        return { status: 200, body: faultsBody(deps.faults) };
      } catch (error) {
        if (error instanceof EmulatorError) return oneError(400, 'body', 'invalid', error.message);
        throw error;
      }
    case 'GET tokens':
      return { status: 200, body: tokenCounts(deps.tokens) };
    case 'PUT tokens': {
      const parsed = tokenSettingsSchema.safeParse(body);
      if (!parsed.success) return errorReply(400, issuesToErrors(parsed.error));
      replaceTokens(deps.tokens, parsed.data);
      return { status: 200, body: tokenCounts(deps.tokens) };
    }
    case 'GET held':
      return { status: 200, body: { held: deps.holds.list() } };
    case 'POST release':
      return { status: 200, body: { released: deps.holds.releaseAll() } };
    case 'GET oauth':
      return { status: 200, body: deps.oauth.stats() };
    case 'POST oauth/refresh-tokens': {
      const parsed = refreshTokenBody.safeParse(body);
      if (!parsed.success) return errorReply(400, issuesToErrors(parsed.error));
      deps.oauth.addRefreshToken(parsed.data.refreshToken);
      return { status: 200, body: deps.oauth.stats() };
    }
    case 'POST oauth/revoke': {
      const parsed = refreshTokenBody.safeParse(body);
      if (!parsed.success) return errorReply(400, issuesToErrors(parsed.error));
      if (!deps.oauth.revoke(parsed.data.refreshToken)) return oneError(404, 'refreshToken', 'not_found', 'no such refresh token (it may have been rotated out already)');
      return { status: 200, body: deps.oauth.stats() };
    }
    default:
      return oneError(405, 'method', 'rule', `${method} is not supported on ${shown}`);
  }
}

function seed(body: unknown, deps: ControlDeps): Reply {
  const parsed = seedSchema.safeParse(body);
  if (!parsed.success) return errorReply(400, issuesToErrors(parsed.error));
  try {
    const result = deps.seed(parsed.data);
    const counts = { sshUsers: result.sshUsers.length, apikeys: result.apikeys.length };
    return { status: 200, body: parsed.data.returnItems === false ? { counts } : { ...result, counts } };
  } catch (error) {
    if (error instanceof EmulatorSeedError) return errorReply(400, error.errors);
    throw error;
  }
}

function faultsBody(faults: FaultController): unknown {
  return { ...faults.current, ruleStats: faults.stats };
}
