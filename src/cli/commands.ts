import type { Command } from 'commander';
import type { CommandContext } from './command-context.js';

type Register = (program: Command, ctx: CommandContext) => void;

/**
 * Commands that hold no listing and no large state: a desired file is at most 10 MB, and a
 * validate of a 200k-item one peaked at 214 MB RSS with the heap's growth bounded and 220 MB
 * without (0.8 s instead of 1.1 s). main() leaves the heap alone for these, as loading
 * node:v8 to bound it was ~5 ms of a ~75 ms cold start (docs/performance.md, "Cold start").
 */
const holdLittle = new Set(['validate', 'schema', 'version', 'help']);

/** Whether a run with these arguments (process.argv after the script) may hold a service's items. */
export function holdsLiveData(args: readonly string[]): boolean {
  const first = args[0];
  // No command, or an option first (--version, --help, a mistake): help or an error.
  return first !== undefined && !first.startsWith('-') && !holdLittle.has(first);
}

/**
 * One file per command; each registers itself. In the order `amsync --help` lists them, and
 * each loaded when needed: a run of one command loads that command's file only, so a cold
 * `amsync validate` does not read and compile the daemon, the emulator and the others
 * (docs/performance.md, "Cold start").
 */
const commands: readonly (readonly [name: string, load: () => Promise<Register>])[] = [
  ['validate', async () => (await import('./validate.js')).registerValidateCommand],
  ['plan', async () => (await import('./plan.js')).registerPlanCommand],
  ['sync', async () => (await import('./sync.js')).registerSyncCommand],
  ['apply', async () => (await import('./apply.js')).registerApplyCommand],
  ['rotate', async () => (await import('./rotate.js')).registerRotateCommand],
  ['export', async () => (await import('./export.js')).registerExportCommand],
  ['schema', async () => (await import('./schema.js')).registerSchemaCommand],
  ['daemon', async () => (await import('./daemon.js')).registerDaemonCommand],
  ['ctl', async () => (await import('./ctl.js')).registerCtlCommand],
  ['emulator', async () => (await import('./emulator.js')).registerEmulatorCommand],
  ['demo', async () => (await import('./demo.js')).registerDemoCommand],
  ['audit', async () => (await import('./audit.js')).registerAuditCommand],
  ['version', async () => (await import('./version-command.js')).registerVersionCommand],
];

/**
 * Registers every command, or only `name` when it names one: the command a run asks for
 * (`amsync validate ...`) needs no other. Anything else (`amsync --help`, `amsync help plan`,
 * a misspelt command that gets a suggestion) gets them all.
 */
export async function registerCommands(program: Command, ctx: CommandContext, name?: string): Promise<void> {
  const named = commands.filter(([n]) => n === name);
  const registers = await Promise.all((named.length > 0 ? named : commands).map(([, load]) => load()));
  for (const register of registers) register(program, ctx);
}
