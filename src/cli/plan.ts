import type { Command } from 'commander';
import type { CommandContext } from './command-context.js';
import { addPlanCommandOptions, type SyncCommandOptions } from './plan-options.js';
import { runSyncCommand } from './sync.js';

export function registerPlanCommand(program: Command, ctx: CommandContext): void {
  const cmd = program.command('plan').description('show what a sync would change, and change nothing (same as `sync --dry-run`)');
  addPlanCommandOptions(cmd).action(async (opts: SyncCommandOptions) => {
    await runSyncCommand(opts, true, ctx);
  });
}
