import { readFile } from 'node:fs/promises';
import { InvalidInputError, UsageError } from '../errors.js';
import { checkRoles, type EmulatorOptions } from './options.js';
import { MAX_TENANTS, numberedTenants, TENANT_NAME_PATTERN } from './tenants.js';
import type { RoleInput } from './types.js';

/** `amsync emulator`'s flags as commander hands them over (camelCase, values as typed). */
export interface EmulatorFlags {
  /** @default 127.0.0.1 */
  host?: string;
  port?: string;
  token?: string[];
  readOnlyToken?: string[];
  expiredToken?: string[];
  refreshToken?: string[];
  accessTokenTtl?: string;
  rotateRefreshTokens?: boolean;
  refreshTokenGrace?: string;
  data?: string;
  roles?: string;
  pageSizeDefault?: string;
  pageSizeMax?: string;
  rateLimit?: string;
  latencyMs?: string;
  failRate?: string;
  maintenance?: boolean;
  asyncWrites?: boolean;
  control: boolean;
  seed?: string;
  tenants?: string;
  tenant?: string[];
}

/** Each flag of `amsync emulator`, declared beside the interface its values arrive in; repeatable ones collect into a list. */
export const emulatorFlagTable: readonly { readonly flags: string; readonly help: string; readonly repeatable?: boolean }[] = [
  { flags: '--host <HOST>', help: 'address to listen on (default 127.0.0.1)' },
  { flags: '--port <N>', help: 'port to listen on; 0, the default, picks a free port' },
  { flags: '--token <TOKEN>', help: 'a read-write bearer token (repeatable; at least one token is required)', repeatable: true },
  { flags: '--read-only-token <TOKEN>', help: 'a token that may only read: writes answer 403 (repeatable)', repeatable: true },
  { flags: '--expired-token <TOKEN>', help: 'a token that answers 401 as expired (repeatable)', repeatable: true },
  { flags: '--refresh-token <KEY>', help: 'an integrator key (refresh token): enables POST /api/v1/oauth2/token (repeatable)', repeatable: true },
  { flags: '--access-token-ttl <SECONDS>', help: 'lifetime of access tokens issued for an integrator key; 401 afterwards (default 900)' },
  { flags: '--rotate-refresh-tokens', help: 'each exchange answers a new refresh token; the old one stops working after the grace' },
  { flags: '--refresh-token-grace <SECONDS>', help: 'how long a rotated-out refresh token still works (default 60)' },
  { flags: '--data <FILE>', help: 'load state from FILE at start and save it after every write (default: in memory)' },
  { flags: '--roles <FILE>', help: 'roles as JSON or YAML: [{id, name, scopes: [{name, read, write}]}, ...] (default: 1 viewer, 2 operator, 3 auditor, 4 admin, with scopes)' },
  { flags: '--page-size-default <N>', help: 'page size when a list asks for none (default 25)' },
  { flags: '--page-size-max <N>', help: 'largest page size; larger ones are clamped (default 100)' },
  { flags: '--rate-limit <N>', help: 'requests per second (token bucket); excess answers 503 with Retry-After' },
  { flags: '--latency-ms <MS>', help: 'mean added latency per request, with jitter (0.5 to 1.5 times MS)' },
  { flags: '--fail-rate <P>', help: 'chance, 0 to 1, of a random 500, 502 or 504' },
  { flags: '--maintenance', help: 'every API request answers 503' },
  { flags: '--async-writes', help: 'writes answer 202 and take effect shortly after' },
  { flags: '--no-control', help: 'turn off the /_emulator/ control API' },
  { flags: '--seed <N>', help: 'seed of the random faults and jitter, to replay a run' },
  { flags: '--tenants <N>', help: 'serve N independent services (tenants t1 … tN, N from 1 to 10000) on this port, each under /t/<name>/ with its own state, tokens, rate limit, faults and control API; un-prefixed paths then answer 404' },
  { flags: '--tenant <NAME>', help: 'serve a tenant of this name under /t/<name>/ (repeatable; instead of --tenants; a-z, 0-9 and -, at most 63)', repeatable: true },
];

/** The end of `amsync emulator --help`: a fleet on one port. */
export const emulatorHelpAfter = [
  '',
  'Tenants (a fleet on one port):',
  '  amsync emulator --port 8080 --token dev --tenants 3',
  '  # amsync emulator listening on http://127.0.0.1:8080',
  '  # tenants: 3 (t1 … t3) under /t/<name>/',
  '  amsync plan --url http://127.0.0.1:8080/t/t2      # one tenant is one service',
  '  # only t2 is in maintenance:',
  "  curl -X PUT -d '{\"maintenance\":true}' \\",
  '    http://127.0.0.1:8080/t/t2/_emulator/faults',
  'With --data, every tenant starts from FILE and nothing is written back.',
].join('\n');

/** The flags -> the emulator's options; a bad value is a UsageError (exit 64) naming the flag. */
export async function optionsFromFlags(f: EmulatorFlags): Promise<EmulatorOptions> {
  const tokens = f.token ?? [];
  const readOnlyTokens = f.readOnlyToken ?? [];
  const refreshTokens = f.refreshToken ?? [];
  if (tokens.length === 0 && readOnlyTokens.length === 0 && refreshTokens.length === 0) {
    throw new UsageError('Expected at least one `--token T` (or `--read-only-token T`, or `--refresh-token K`): the emulator generates no token, and without one every request answers 401.');
  }
  const host = f.host ?? '127.0.0.1';
  const options: EmulatorOptions = {
    host,
    port: f.port === undefined ? 0 : integer('--port', f.port, 0, 65535),
    tokens,
    readOnlyTokens,
    expiredTokens: f.expiredToken ?? [],
    refreshTokens,
    rotateRefreshTokens: f.rotateRefreshTokens === true,
    control: f.control,
    maintenance: f.maintenance === true,
    asyncWrites: f.asyncWrites === true,
  };
  if (host.trim() === '') throw new UsageError("Expected `--host` to be a host name or address, got ''");
  if (f.data !== undefined) options.dataFile = f.data;
  if (f.roles !== undefined) options.roles = await readRoles(f.roles);
  if (f.pageSizeMax !== undefined) options.pageSizeMax = integer('--page-size-max', f.pageSizeMax, 1, 1_000_000);
  if (f.pageSizeDefault !== undefined) options.pageSizeDefault = integer('--page-size-default', f.pageSizeDefault, 1, options.pageSizeMax ?? 100);
  if (f.rateLimit !== undefined) options.rateLimit = decimal('--rate-limit', f.rateLimit, 'a number above 0', (n) => n > 0);
  if (f.latencyMs !== undefined) options.latencyMs = decimal('--latency-ms', f.latencyMs, 'a number from 0 to 600000', (n) => n >= 0 && n <= 600_000);
  if (f.failRate !== undefined) options.failRate = decimal('--fail-rate', f.failRate, 'a number from 0 to 1', (n) => n >= 0 && n <= 1);
  if (f.accessTokenTtl !== undefined) options.accessTokenTtlSeconds = decimal('--access-token-ttl', f.accessTokenTtl, 'a number of seconds above 0, at most a year', (n) => n > 0 && n <= 31_536_000);
  if (f.refreshTokenGrace !== undefined) options.refreshTokenGraceSeconds = decimal('--refresh-token-grace', f.refreshTokenGrace, 'a number of seconds from 0 to a year', (n) => n >= 0 && n <= 31_536_000);
  if (f.seed !== undefined) options.seed = integer('--seed', f.seed, 0, 2 ** 32 - 1);
  const tenants = tenantsOf(f);
  if (tenants !== undefined) options.tenants = tenants;
  return options;
}

/** `--tenants N` or the `--tenant NAME`s, checked here so that the message names the flag. */
function tenantsOf(f: EmulatorFlags): string[] | undefined {
  if (f.tenants !== undefined && f.tenant !== undefined) throw new UsageError('Expected either `--tenants N` or `--tenant NAME` (repeatable), not both');
  if (f.tenants !== undefined) return numberedTenants(integer('--tenants', f.tenants, 1, MAX_TENANTS));
  if (f.tenant === undefined) return undefined;
  if (f.tenant.length > MAX_TENANTS) throw new UsageError(`Expected at most ${MAX_TENANTS} \`--tenant\` flags, got ${f.tenant.length}`);
  const seen = new Set<string>();
  for (const name of f.tenant) {
    if (!TENANT_NAME_PATTERN.test(name)) throw new UsageError(`Expected \`--tenant\` to be a name of a-z, 0-9 and - (${TENANT_NAME_PATTERN.source}), got '${name}'`);
    if (seen.has(name)) throw new UsageError(`Expected each \`--tenant\` name once, got '${name}' twice`);
    seen.add(name);
  }
  return [...seen];
}

async function readRoles(file: string): Promise<RoleInput[]> {
  let doc: unknown;
  // Loaded here: only a run with --roles reads YAML.
  const { parse: parseYaml } = await import('yaml');
  try {
    // YAML is a superset of JSON, so one parser reads both.
    doc = parseYaml(await readFile(file, 'utf8'));
  } catch (error) {
    throw new InvalidInputError(`Cannot read the roles file ${file}: ${(error as Error).message}`, [], 'emulator_roles_file', { cause: error });
  }
  const list = Array.isArray(doc) ? doc : (doc as { roles?: unknown } | null)?.roles;
  try {
    return checkRoles(list);
  } catch (error) {
    throw new InvalidInputError(`Invalid roles file ${file}: ${(error as Error).message}`, [], 'emulator_roles_file', { cause: error });
  }
}

/** The startup line on stderr: what runs, never the tokens themselves (only how many there are). */
export function describeOptions(o: EmulatorOptions, seed: number, url: string): string {
  const count = (list: string[] | undefined) => list?.length ?? 0;
  const parts = [
    `${count(o.tokens)} read-write, ${count(o.readOnlyTokens)} read-only and ${count(o.expiredTokens)} expired token(s) configured`,
    ...(count(o.refreshTokens) > 0
      ? [`${count(o.refreshTokens)} integrator key(s): access tokens live ${o.accessTokenTtlSeconds ?? 900} s${o.rotateRefreshTokens ? ', refresh tokens rotate' : ''}`]
      : []),
    o.dataFile === undefined ? 'state in memory' : o.tenants === undefined ? `state in ${o.dataFile}` : `every tenant starts from ${o.dataFile} (nothing is written back)`,
    o.control === false ? 'control API off' : `control API at ${url}${o.tenants === undefined ? '' : '/t/<name>'}/_emulator/`,
    `fault seed ${seed}`,
  ];
  const faults = [
    o.rateLimit !== undefined ? `rate limit ${o.rateLimit}/s` : '',
    o.latencyMs ? `latency ${o.latencyMs} ms` : '',
    o.failRate ? `fail rate ${o.failRate}` : '',
    o.maintenance ? 'maintenance' : '',
    o.asyncWrites ? 'async writes' : '',
  ].filter(Boolean);
  if (faults.length > 0) parts.push(`faults: ${faults.join(', ')}`);
  return `amsync emulator: ${parts.join('; ')}`;
}

function integer(flag: string, raw: string, min: number, max: number): number {
  const n = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new UsageError(`Expected \`${flag}\` to be an integer from ${min} to ${max}, got '${raw}'`);
  return n;
}

function decimal(flag: string, raw: string, expected: string, ok: (n: number) => boolean): number {
  const n = raw.trim() === '' ? Number.NaN : Number(raw);
  if (!Number.isFinite(n) || !ok(n)) throw new UsageError(`Expected \`${flag}\` to be ${expected}, got '${raw}'`);
  return n;
}
