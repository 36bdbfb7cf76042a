import type { Command } from 'commander';
import { AmsyncError, InvalidInputError, UsageError } from '../errors.js';
import type { EmulatorFlags, EmulatorOptions, RunningEmulator, RunningTenants } from '../emulator/index.js';
import type * as EmulatorModule from '../emulator/index.js';
import type { CommandContext } from './command-context.js';

/** `amsync emulator`: the service emulator as a process, until SIGINT or SIGTERM. */
export function registerEmulatorCommand(program: Command, ctx: CommandContext): void {
  program
    .command('emulator')
    .description('run the Access Management Service emulator: the whole API on a local port, for trying an access file, tests and CI')
    .option('--host <HOST>', 'address to listen on (default 127.0.0.1)')
    .option('--port <N>', 'port to listen on; 0, the default, picks a free port')
    .option('--token <TOKEN>', 'a read-write bearer token (repeatable; at least one token is required)', collect)
    .option('--read-only-token <TOKEN>', 'a token that may only read: writes answer 403 (repeatable)', collect)
    .option('--expired-token <TOKEN>', 'a token that answers 401 as expired (repeatable)', collect)
    .option('--refresh-token <KEY>', 'an integrator key (refresh token): enables POST /api/v1/oauth2/token (repeatable)', collect)
    .option('--access-token-ttl <SECONDS>', 'lifetime of access tokens issued for an integrator key; 401 afterwards (default 900)')
    .option('--rotate-refresh-tokens', 'each exchange answers a new refresh token; the old one stops working after the grace')
    .option('--refresh-token-grace <SECONDS>', 'how long a rotated-out refresh token still works (default 60)')
    .option('--data <FILE>', 'load state from FILE at start and save it after every write (default: in memory)')
    .option('--roles <FILE>', 'roles as JSON or YAML: [{id, name, scopes: [{name, read, write}]}, ...] (default: 1 viewer, 2 operator, 3 auditor, 4 admin, with scopes)')
    .option('--page-size-default <N>', 'page size when a list asks for none (default 25)')
    .option('--page-size-max <N>', 'largest page size; larger ones are clamped (default 100)')
    .option('--rate-limit <N>', 'requests per second (token bucket); excess answers 503 with Retry-After')
    .option('--latency-ms <MS>', 'mean added latency per request, with jitter (0.5 to 1.5 times MS)')
    .option('--fail-rate <P>', 'chance, 0 to 1, of a random 500, 502 or 504')
    .option('--maintenance', 'every API request answers 503')
    .option('--async-writes', 'writes answer 202 and take effect shortly after')
    .option('--no-control', 'turn off the /_emulator/ control API')
    .option('--seed <N>', 'seed of the random faults and jitter, to replay a run')
    .option(
      '--tenants <N>',
      'serve N independent services (tenants t1 … tN, N from 1 to 10000) on this port, each under /t/<name>/ with its own state, tokens, rate limit, faults and control API; un-prefixed paths then answer 404',
    )
    .option('--tenant <NAME>', 'serve a tenant of this name under /t/<name>/ (repeatable; instead of --tenants; a-z, 0-9 and -, at most 63)', collect)
    .addHelpText(
      'after',
      [
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
      ].join('\n'),
    )
    .action(async (flags: EmulatorFlags) => {
      // Loaded here, not at start: only this command and the demo run the emulator.
      const emulatorModule = await import('../emulator/index.js');
      const options = await emulatorModule.optionsFromFlags(flags);
      const emulator = await start(options, emulatorModule);
      ctx.io.stdout.write(`amsync emulator listening on ${emulator.url}\n`);
      if ('tenantNames' in emulator) {
        ctx.io.stdout.write(`tenants: ${emulator.tenantNames.length} (${emulatorModule.describeTenantNames(emulator.tenantNames)}) under /t/<name>/\n`);
      }
      ctx.io.stderr.write(`${emulatorModule.describeOptions(options, emulator.seedValue, emulator.url)}\n`);
      await untilSignal(ctx.io.signals ?? process);
      ctx.io.stderr.write('amsync emulator: stopping\n');
      await emulator.close();
    });
}

/** Starts it; the emulator's own errors become the exit codes of a usage error (64) and of a bad file (65). */
async function start(options: EmulatorOptions, { EmulatorError, startEmulator }: Pick<typeof EmulatorModule, 'EmulatorError' | 'startEmulator'>): Promise<RunningEmulator | RunningTenants> {
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
