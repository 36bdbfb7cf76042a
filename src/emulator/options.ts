import { randomInt } from 'node:crypto';
import { EmulatorError } from './errors.js';
import { MAX_TENANTS, numberedTenants, TENANT_NAME_PATTERN } from './tenants.js';
import type { FaultSettings, RoleInput, ScopeView } from './types.js';

export interface EmulatorOptions {
  /** @default '127.0.0.1' */
  host?: string;
  /** 0 picks a free port. @default 0 */
  port?: number;
  /** Read-write bearer tokens. */
  tokens?: string[];
  /** Tokens that may read; any write answers 403. */
  readOnlyTokens?: string[];
  /** Tokens that answer 401 as expired. */
  expiredTokens?: string[];
  /** Integrator keys: they enable `POST /api/v1/oauth2/token`, which issues access tokens. */
  refreshTokens?: string[];
  /** Lifetime of issued access tokens, in seconds; 401 afterwards. @default 900 */
  accessTokenTtlSeconds?: number;
  /** Each exchange answers a new refresh token; the old one stops working after the grace. @default false */
  rotateRefreshTokens?: boolean;
  /** How long a rotated-out refresh token still works, in seconds. @default 60 */
  refreshTokenGraceSeconds?: number;
  /**
   * Epoch milliseconds: timestamps, access token expiry and refresh token grace. Tests pass a
   * clock they move, instead of waiting. @default Date.now
   */
  clock?: () => number;
  /**
   * Epoch milliseconds of the rate limit's token bucket and of the faults' timing (maintenance
   * windows, Retry-After dates). A test in virtual time passes its client's clock. @default Date.now
   */
  faultClock?: () => number;
  /** Load at start, persist after every write; in memory when absent. */
  dataFile?: string;
  /** Roles and their scopes. @default defaultRoles: 1 viewer, 2 operator, 3 auditor, 4 admin */
  roles?: RoleInput[];
  /** @default 25 */
  pageSizeDefault?: number;
  /** Larger sizes are clamped to it. @default 100 */
  pageSizeMax?: number;
  /** Requests per second of a token bucket (burst: one second's worth); undefined = unlimited. */
  rateLimit?: number;
  /** Mean added latency; each request waits 0.5 L to 1.5 L. @default 0 */
  latencyMs?: number;
  /** Chance, 0..1, of a random 500/502/504. @default 0 */
  failRate?: number;
  /** Every API request answers 503. @default false */
  maintenance?: boolean;
  /** Writes answer 202 and take effect shortly after. @default false */
  asyncWrites?: boolean;
  /** The /_emulator/ control API. @default true */
  control?: boolean;
  /** Seed of every random choice of faults and jitter; default a random seed (see `seed` of the handle). */
  seed?: number;
  /** Where unexpected handler errors go (they also answer 500). @default a line on stderr */
  onError?: (error: unknown) => void;
  /**
   * Serve many independent services on one port, each under `/t/<name>/` with its own state,
   * tokens, rate limit, faults and control API: `N` (1 to 10000) names them `t1` … `tN`, a list
   * names them itself (`^[a-z0-9][a-z0-9-]{0,62}$`). Un-prefixed paths then answer 404. Every
   * other option applies to each tenant; with `dataFile`, each starts from the file and nothing
   * is written back. @default undefined: one service, no prefix
   */
  tenants?: number | readonly string[];
}

const scope = (name: string, write: boolean): ScopeView => ({ name, read: true, write });

/**
 * Roles with plausible scopes, one per part of the API a role can reach: viewers read, an
 * operator manages SSH users, an auditor reads everything including the audit trail, an
 * admin writes everything.
 */
export const defaultRoles: readonly RoleInput[] = [
  { id: 1, name: 'viewer', scopes: [scope('sshusers', false), scope('apikeys', false), scope('roles', false)] },
  { id: 2, name: 'operator', scopes: [scope('sshusers', true), scope('apikeys', false), scope('roles', false)] },
  { id: 3, name: 'auditor', scopes: [scope('sshusers', false), scope('apikeys', false), scope('roles', false), scope('audit', false)] },
  { id: 4, name: 'admin', scopes: [scope('sshusers', true), scope('apikeys', true), scope('roles', true), scope('audit', false)] },
];

export interface ResolvedOptions {
  host: string;
  port: number;
  tokens: string[];
  readOnlyTokens: string[];
  expiredTokens: string[];
  refreshTokens: string[];
  accessTokenTtlSeconds: number;
  rotateRefreshTokens: boolean;
  refreshTokenGraceSeconds: number;
  clock: () => number;
  faultClock: () => number;
  dataFile: string | undefined;
  roles: RoleInput[];
  pageSizeDefault: number;
  pageSizeMax: number;
  faults: Partial<FaultSettings>;
  control: boolean;
  seed: number;
  onError: (error: unknown) => void;
  /** Tenant names in the order given; null: one service without a prefix. */
  tenants: string[] | null;
}

/** Checks options loudly ("Expected `port` to be ...") and fills in defaults. */
export function resolveOptions(o: EmulatorOptions): ResolvedOptions {
  const host = o.host ?? '127.0.0.1';
  if (typeof host !== 'string' || host.trim() === '') fail('host', 'a host name or address', host);
  const port = o.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail('port', 'an integer from 0 to 65535', port);
  const tokens = tokenList('tokens', o.tokens);
  const readOnlyTokens = tokenList('readOnlyTokens', o.readOnlyTokens);
  const expiredTokens = tokenList('expiredTokens', o.expiredTokens);
  const refreshTokens = tokenList('refreshTokens', o.refreshTokens);
  if (tokens.length + readOnlyTokens.length + refreshTokens.length === 0) {
    throw new EmulatorError('emulator_options', 'Expected at least one token in `tokens`, `readOnlyTokens` or `refreshTokens`, got none: every API request would answer 401.');
  }
  const accessTokenTtlSeconds = o.accessTokenTtlSeconds ?? 900;
  if (!(Number.isFinite(accessTokenTtlSeconds) && accessTokenTtlSeconds > 0 && accessTokenTtlSeconds <= 31_536_000)) {
    fail('accessTokenTtlSeconds', 'a number of seconds above 0, at most a year', accessTokenTtlSeconds);
  }
  const refreshTokenGraceSeconds = o.refreshTokenGraceSeconds ?? 60;
  if (!(Number.isFinite(refreshTokenGraceSeconds) && refreshTokenGraceSeconds >= 0 && refreshTokenGraceSeconds <= 31_536_000)) {
    fail('refreshTokenGraceSeconds', 'a number of seconds from 0 to a year', refreshTokenGraceSeconds);
  }
  const pageSizeDefault = o.pageSizeDefault ?? 25;
  const pageSizeMax = o.pageSizeMax ?? 100;
  if (!Number.isInteger(pageSizeMax) || pageSizeMax < 1) fail('pageSizeMax', 'an integer from 1 upwards', pageSizeMax);
  if (!Number.isInteger(pageSizeDefault) || pageSizeDefault < 1 || pageSizeDefault > pageSizeMax) {
    fail('pageSizeDefault', `an integer from 1 to pageSizeMax (${pageSizeMax})`, pageSizeDefault);
  }
  if (o.rateLimit !== undefined && !(o.rateLimit > 0 && Number.isFinite(o.rateLimit))) fail('rateLimit', 'a number above 0', o.rateLimit);
  if (o.latencyMs !== undefined && !(o.latencyMs >= 0 && o.latencyMs <= 600_000)) fail('latencyMs', 'a number from 0 to 600000', o.latencyMs);
  if (o.failRate !== undefined && !(o.failRate >= 0 && o.failRate <= 1)) fail('failRate', 'a number from 0 to 1', o.failRate);
  const seed = o.seed ?? randomInt(0, 2 ** 31);
  if (!Number.isSafeInteger(seed)) fail('seed', 'an integer', seed);
  const tenants = o.tenants === undefined ? null : checkTenants(o.tenants);
  return {
    host,
    port,
    tokens,
    readOnlyTokens,
    expiredTokens,
    refreshTokens,
    accessTokenTtlSeconds,
    rotateRefreshTokens: o.rotateRefreshTokens ?? false,
    refreshTokenGraceSeconds,
    clock: o.clock ?? Date.now,
    faultClock: o.faultClock ?? Date.now,
    dataFile: o.dataFile,
    roles: checkRoles(o.roles ?? defaultRoles),
    pageSizeDefault,
    pageSizeMax,
    faults: {
      rateLimit: o.rateLimit ?? null,
      latencyMs: o.latencyMs ?? 0,
      failRate: o.failRate ?? 0,
      maintenance: o.maintenance ?? false,
      asyncWrites: o.asyncWrites ?? false,
    },
    control: o.control ?? true,
    seed,
    onError: o.onError ?? ((error) => process.stderr.write(`amsync emulator: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)),
    tenants,
  };
}

/** `N` as `t1` … `tN`, or a list of distinct well-formed names. */
export function checkTenants(tenants: unknown): string[] {
  if (typeof tenants === 'number') {
    if (!Number.isInteger(tenants) || tenants < 1 || tenants > MAX_TENANTS) fail('tenants', `an integer from 1 to ${MAX_TENANTS}, or a list of names`, tenants);
    return numberedTenants(tenants);
  }
  if (!Array.isArray(tenants)) fail('tenants', `an integer from 1 to ${MAX_TENANTS}, or a list of names`, tenants);
  const list = tenants as unknown[];
  if (list.length < 1 || list.length > MAX_TENANTS) fail('tenants', `a list of 1 to ${MAX_TENANTS} names`, `${list.length} names`);
  const seen = new Set<string>();
  for (const [i, name] of list.entries()) {
    if (typeof name !== 'string' || !TENANT_NAME_PATTERN.test(name)) fail(`tenants[${i}]`, `a name matching ${TENANT_NAME_PATTERN.source}`, name);
    if (seen.has(name)) fail(`tenants[${i}]`, 'a name not given before', name);
    seen.add(name);
  }
  return [...seen];
}

/** Roles must have unique positive integer ids, names, and well-formed scopes (default none). */
export function checkRoles(roles: unknown): RoleInput[] {
  if (!Array.isArray(roles)) fail('roles', 'an array of {id, name, scopes?}', roles);
  const seen = new Set<number>();
  return (roles as unknown[]).map((r, i) => {
    const role = r as Partial<RoleInput> | null;
    if (typeof role !== 'object' || role === null || !Number.isSafeInteger(role.id) || (role.id as number) < 1 || typeof role.name !== 'string' || role.name === '') {
      fail(`roles[${i}]`, 'an object {id: positive integer, name: non-empty string, scopes?: [{name, read, write}]}', r);
    }
    const { id, name } = role as RoleInput;
    if (seen.has(id)) fail(`roles[${i}].id`, 'an id not used by another role', id);
    seen.add(id);
    return { id, name, scopes: checkScopes(role.scopes, `roles[${i}].scopes`) };
  });
}

function checkScopes(scopes: unknown, where: string): ScopeView[] {
  if (scopes === undefined) return [];
  if (!Array.isArray(scopes)) fail(where, 'an array of {name, read, write}', scopes);
  return (scopes as unknown[]).map((s, i) => {
    const sc = s as Partial<ScopeView> | null;
    if (typeof sc !== 'object' || sc === null || typeof sc.name !== 'string' || sc.name === '' || typeof sc.read !== 'boolean' || typeof sc.write !== 'boolean') {
      fail(`${where}[${i}]`, 'an object {name: non-empty string, read: boolean, write: boolean}', s);
    }
    return { name: sc.name as string, read: sc.read as boolean, write: sc.write as boolean };
  });
}

function tokenList(name: string, list: string[] | undefined): string[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) fail(name, 'an array of strings', list);
  for (const t of list) {
    // A token with white space could never be sent in `Authorization: Bearer <token>`.
    if (typeof t !== 'string' || !/^\S+$/.test(t)) fail(name, 'non-empty strings without white space', '(a token, not shown)');
  }
  return [...list];
}

function fail(name: string, expected: string, got: unknown): never {
  const shown = typeof got === 'string' ? `'${got}'` : JSON.stringify(got) ?? String(got);
  throw new EmulatorError('emulator_options', `Expected \`${name}\` to be ${expected}, got ${shown}`);
}
