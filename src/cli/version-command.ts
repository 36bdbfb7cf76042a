import type { Command } from 'commander';
import type { CommandContext } from './command-context.js';
import { version } from './version.js';

/** `amsync version`: as `-V`, `-v` and `--version`. */
export function registerVersionCommand(program: Command, ctx: CommandContext): void {
  program
    .command('version')
    .description('print the version')
    .action(() => {
      ctx.io.stdout.write(`${version}\n`);
    });
}
