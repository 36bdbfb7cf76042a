import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { AmsyncError, InvalidInputError, UsageError } from '../errors.js';
import type { EmulatorOptions, RoleInput, RunningEmulator, RunningTenants } from '../emulator/index.js';
import type * as EmulatorModule from '../emulator/index.js';
import type { CommandContext } from './command-context.js';

interface EmulatorFlags {
  host: string;
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

/** `amsync emulator`: the service emulator as a process, until SIGINT or SIGTERM. */
export function registerEmulatorCommand(program: Command, ctx: CommandContext): void {
  program
    .command('emulator')
    .description('Run the Access Management Service emulator: the whole API on a local port, for trying an access file, tests and CI.')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <n>', 'port to listen on; 0, the default, picks a free port')
    .option('--token <token>', 'a read-write bearer token (repeatable; at least one token is required)', collect)
    .option('--read-only-token <token>', 'a token that may only read: writes answer 403 (repeatable)', collect)
    .option('--expired-token <token>', 'a token that answers 401 as expired (repeatable)', collect)
    .option('--refresh-token <key>', 'an integrator key (refresh token): enables POST /api/v1/oauth2/token (repeatable)', collect)
    .option('--access-token-ttl <seconds>', 'lifetime of access tokens issued for an integrator key; 401 afterwards (default 900)')
    .option('--rotate-refresh-tokens', 'each exchange answers a new refresh token; the old one stops working after the grace')
    .option('--refresh-token-grace <seconds>', 'how long a rotated-out refresh token still works (default 60)')
    .option('--data <file>', 'load state from FILE at start and save it after every write (default: in memory)')
    .option('--roles <file>', 'roles as JSON or YAML: [{id, name, scopes: [{name, read, write}]}, ...] (default: 1 viewer, 2 operator, 3 auditor, 4 admin, with scopes)')
    .option('--page-size-default <n>', 'page size when a list asks for none (default 25)')
    .option('--page-size-max <n>', 'largest page size; larger ones are clamped (default 100)')
    .option('--rate-limit <r>', 'requests per second (token bucket); excess answers 503 with Retry-After')
    .option('--latency-ms <l>', 'mean added latency per request, with jitter (0.5 L to 1.5 L)')
    .option('--fail-rate <p>', 'chance, 0 to 1, of a random 500, 502 or 504')
    .option('--maintenance', 'every API request answers 503')
    .option('--async-writes', 'writes answer 202 and take effect shortly after')
    .option('--no-control', 'turn off the /_emulator/ control API')
    .option('--seed <n>', 'seed of the random faults and jitter, to replay a run')
    .option(
      '--tenants <n>',
      'serve N independent services (tenants t1 … tN, N from 1 to 10000) on this port, each under /t/<name>/ with its own state, tokens, rate limit, faults and control API; un-prefixed paths then answer 404',
    )
    .option('--tenant <name>', 'serve a tenant of this name under /t/<name>/ (repeatable; instead of --tenants; a-z, 0-9 and -, at most 63)', collect)
    .addHelpText(
      'after',
      [
        '',
        'Tenants (a fleet on one port):',
        '  amsync emulator --port 8080 --token dev --tenants 3',
        '  # amsync emulator listening on http://127.0.0.1:8080',
        '  # tenants: 3 (t1 … t3) under /t/<name>/',
        '  amsync plan --url http://127.0.0.1:8080/t/t2      # one tenant is one service',
        '  curl -X PUT http://127.0.0.1:8080/t/t2/_emulator/faults -d \'{"maintenance":true}\'   # only t2',
        'With --data, every tenant starts from FILE and nothing is written back.',
      ].join('\n'),
    )
    .action(async (flags: EmulatorFlags) => {
      const options = await toOptions(flags);
      const emulator = await start(options);
      ctx.io.stdout.write(`amsync emulator listening on ${emulator.url}\n`);
      if ('tenantNames' in emulator) {
        const { describeTenantNames } = await import('../emulator/index.js');
        ctx.io.stdout.write(`tenants: ${emulator.tenantNames.length} (${describeTenantNames(emulator.tenantNames)}) under /t/<name>/\n`);
      }
      ctx.io.stderr.write(`${describe(options, emulator.seedValue, emulator.url)}\n`);
      await untilSignal(ctx.io.signals ?? process);
      ctx.io.stderr.write('amsync emulator: stopping\n');
      await emulator.close();
    });
}

async function toOptions(f: EmulatorFlags): Promise<EmulatorOptions> {
  const tokens = f.token ?? [];
  const readOnlyTokens = f.readOnlyToken ?? [];
  const refreshTokens = f.refreshToken ?? [];
  if (tokens.length === 0 && readOnlyTokens.length === 0 && refreshTokens.length === 0) {
    throw new UsageError('Expected at least one `--token T` (or `--read-only-token T`, or `--refresh-token K`): the emulator generates no token, and without one every request answers 401.');
  }
  const options: EmulatorOptions = {
    host: f.host,
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
  if (f.host.trim() === '') throw new UsageError("Expected `--host` to be a host name or address, got ''");
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
  const tenants = tenantsOf(f, await import('../emulator/index.js'));
  if (tenants !== undefined) options.tenants = tenants;
  return options;
}

/** `--tenants N` or the `--tenant NAME`s, checked here so that the message names the flag. */
function tenantsOf(f: EmulatorFlags, rules: Pick<typeof EmulatorModule, 'MAX_TENANTS' | 'TENANT_NAME_PATTERN' | 'numberedTenants'>): string[] | undefined {
  // The emulator is loaded only when the command runs: other commands start without it.
  const { MAX_TENANTS, TENANT_NAME_PATTERN, numberedTenants } = rules;
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

async function start(options: EmulatorOptions): Promise<RunningEmulator | RunningTenants> {
  // Loaded here, not at start: only this command and the demo run the emulator.
  const { EmulatorError, startEmulator } = await import('../emulator/index.js');
  try {
    const { tenants } = options;
    return tenants === undefined ? await startEmulator({ ...options, tenants }) : await startEmulator({ ...options, tenants });
  } catch (error) {
    if (error instanceof EmulatorError) {
      if (error.code === 'emulator_options') throw new UsageError(error.message, 'usage', { cause: error });
      if (error.code === 'emulator_data_file') throw new InvalidInputError(error.message, [], 'emulator_data_file', { cause: error });
    }
    if (error instanceof AmsyncError) throw error;
    throw new AmsyncError('emulator_start', `The emulator could not start: ${(error as Error).message}`, { cause: error });
  }
}

async function readRoles(file: string): Promise<RoleInput[]> {
  let doc: unknown;
  const [{ parse: parseYaml }, { checkRoles }] = await Promise.all([import('yaml'), import('../emulator/options.js')]);
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

function describe(o: EmulatorOptions, seed: number, url: string): string {
  const count = (list: string[] | undefined) => list?.length ?? 0;
  const parts = [
    // Never the tokens themselves: only how many there are.
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

function untilSignal(signals: NodeJS.EventEmitter): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      signals.off('SIGINT', stop);
      signals.off('SIGTERM', stop);
      resolve();
    };
    signals.on('SIGINT', stop);
    signals.on('SIGTERM', stop);
  });
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
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
