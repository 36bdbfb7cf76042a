import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { renderSettingsSchema } from '../settings/index.js';
import { renderAccessSchema } from '../desired/index.js';
import type { CommandContext } from './command-context.js';

/**
 * `amsync schema [--settings | --targets]`: the JSON Schema of the desired-state file (or of
 * the settings file, or of a fleet's targets file), for editors and other tools:
 * `amsync schema > access.schema.json`.
 */
export function registerSchemaCommand(program: Command, ctx: CommandContext): void {
  program
    .command('schema')
    .description('print the JSON Schema of the desired-state file (for editors: amsync schema > access.schema.json)')
    .option('--settings', 'the JSON Schema of the settings file instead')
    .option('--targets', "the JSON Schema of a fleet's targets file instead (config/targets.schema.json)")
    .action(async (opts: { settings?: boolean; targets?: boolean }) => {
      if (opts.settings === true && opts.targets === true) throw new UsageError('--settings and --targets each print one schema: give one of them', 'conflicting_flags');
      // Loaded here: only --targets needs the fleet's declarations.
      const schema = opts.targets === true ? (await import('../fleet/index.js')).renderTargetsSchema() : opts.settings === true ? renderSettingsSchema() : renderAccessSchema();
      ctx.io.stdout.write(schema);
    });
}
