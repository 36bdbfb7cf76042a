import { Option, type Command } from 'commander';
import { AmsyncError, InvalidInputError, UsageError } from '../errors.js';
import { emulatorFlagTable, emulatorHelpAfter, type EmulatorFlags, type EmulatorOptions, type RunningEmulator, type RunningTenants } from '../emulator/index.js';
import type * as EmulatorModule from '../emulator/index.js';
import type { CommandContext } from './command-context.js';

/** `amsync emulator`: the service emulator as a process, until SIGINT or SIGTERM. */
export function registerEmulatorCommand(program: Command, ctx: CommandContext): void {
  const cmd = program
    .command('emulator')
    .description('run the Access Management Service emulator: the whole API on a local port, for trying an access file, tests and CI')
    .addHelpText('after', emulatorHelpAfter);
  for (const { flags, help, repeatable } of emulatorFlagTable) cmd.addOption(repeatable === true ? new Option(flags, help).argParser(collect) : new Option(flags, help));
  cmd.action(async (flags: EmulatorFlags) => {
    // Loaded with this command's file: only `emulator`, `demo` and the full help load it.
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
