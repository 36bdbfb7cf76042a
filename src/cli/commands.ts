import type { Command } from 'commander';
import type { CommandContext } from './command-context.js';

type Register = (program: Command, ctx: CommandContext) => void;

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
  ['export', async () => (await import('./export.js')).registerExportCommand],
  ['schema', async () => (await import('./schema.js')).registerSchemaCommand],
  ['daemon', async () => (await import('./daemon.js')).registerDaemonCommand],
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
