import type { Command } from 'commander';
import { renderSettingsSchema } from '../settings/index.js';
import { renderAccessSchema } from '../desired/index.js';
import type { CommandContext } from './command-context.js';

/**
 * `amsync schema [--settings]`: the JSON Schema of the desired-state file (or of the settings
 * file), for editors and other tools: `amsync schema > access.schema.json`.
 */
export function registerSchemaCommand(program: Command, ctx: CommandContext): void {
  program
    .command('schema')
    .description('print the JSON Schema of the desired-state file (for editors: amsync schema > access.schema.json)')
    .option('--settings', 'the JSON Schema of the settings file instead')
    .action((opts: { settings?: boolean }) => {
      ctx.io.stdout.write(opts.settings === true ? renderSettingsSchema() : renderAccessSchema());
    });
}
