import type { Command } from 'commander';
import { schemaFileName } from '../app/index.js';
import { UsageError } from '../errors.js';
import type { CommandContext } from './command-context.js';
import type { CliIo } from './io.js';
import { addConnectionOptions, refuseOptions, type ServiceOptions } from './shared-options.js';
import { addFleetOptions, checkFleetFlags, resolveTargetsFile, type FleetOptions } from './fleet-options.js';

export interface ExportOptions extends ServiceOptions, FleetOptions {
  readonly output?: string;
  readonly schema?: string;
  /** `--write-schema`: the JSON Schema beside the output, and `$schema` pointing at it. */
  readonly writeSchema?: boolean;
  /** `--role-names`: roles by name where the roles listing answers. */
  readonly roleNames?: boolean;
}

/** Flags of the other commands that mean nothing to an export: refused with why, not silently ignored. */
const unusedFlags: readonly { flags: string; flag: string; hint: string }[] = [
  { flags: '-f, --file <FILE>', flag: '-f/--file', hint: 'export writes a desired-state file: name it with -o FILE' },
  { flags: '--out <FILE>', flag: '--out', hint: 'name the output with -o/--output FILE' },
  { flags: '--prune', flag: '--prune', hint: 'an export never prunes: it leaves prune off' },
  { flags: '--max-deletes <N>', flag: '--max-deletes', hint: 'an export deletes nothing' },
  { flags: '--detailed-exitcode', flag: '--detailed-exitcode', hint: 'an export has no plan' },
  { flags: '--json', flag: '--json', hint: 'an export is YAML, a desired-state file' },
  { flags: '--format <FORMAT>', flag: '--format', hint: 'an export is YAML, a desired-state file' },
];

/**
 * `amsync export [-o FILE]`: the actual state as a desired-state file, with no secrets, that
 * validates and plans zero changes against the same service (the import round trip that
 * Terraform's import-verify checks). amsync checks that round trip itself before writing.
 */
export function registerExportCommand(program: Command, ctx: CommandContext): void {
  const cmd = program.command('export').description('write the actual state as a desired-state file (no secrets) that plans zero changes: the way to start managing a service');
  addConnectionOptions(cmd)
    .option('-o, --output <FILE>', 'write to FILE (atomically) instead of stdout')
    .option('--schema <REF>', 'the `$schema` reference in the header (default: the installed config/access.schema.json, relative to the output, when it lies there)')
    .option('--role-names', "write apikey roles by name (GET /api/roles) instead of by id; ids where a name is not unique or the service has no roles listing")
    .option('--write-schema', `also write the JSON Schema beside the output, as ${schemaFileName}, and point \`$schema\` at it (needs -o)`);
  addFleetOptions(cmd, { selector: false, concurrency: false });
  refuseOptions(
    cmd,
    unusedFlags.map(({ flags, flag, hint }) => ({ flags, message: `${flag} has no meaning for export: ${hint}` })),
  ).action(async (opts: ExportOptions) => {
    await runExport(opts, ctx.io);
  });
}

export async function runExport(opts: ExportOptions, io: CliIo): Promise<void> {
  const output = opts.output;
  if (opts.writeSchema === true && output === undefined) throw new UsageError(`--write-schema writes ${schemaFileName} beside the export: name the export with -o FILE`, 'conflicting_flags');
  if (opts.writeSchema === true && opts.schema !== undefined) throw new UsageError('--write-schema and --schema both set the `$schema` reference: give one', 'conflicting_flags');
  // Fleet: --targets FILE --target NAME exports that one target.
  const targetsFile = resolveTargetsFile(opts, io.env);
  checkFleetFlags(opts, targetsFile);
  const settings = targetsFile === undefined ? undefined : await (await import('./fleet.js')).fleetExportSettings(opts, io.env, targetsFile);
  // Loaded here, not at start: a cold `amsync validate` needs neither the client, the state
  // reader, the planner nor the progress line.
  const [{ createServiceContext }, { LiveOutput }, { exportState }] = await Promise.all([import('./service-context.js'), import('./live-output.js'), import('../app/export-state.js')]);
  // The progress of a long listing, on a terminal; logs pass above it.
  const live = new LiveOutput(io, { streamResults: false, color: false });
  const context = await createServiceContext(opts, io, { logStream: live.logStream, ...(settings === undefined ? {} : { settings }) }).catch((error: unknown) => {
    live.close();
    throw error;
  });
  try {
    const request = { output, writeSchema: opts.writeSchema === true, schema: opts.schema, roleNames: opts.roleNames === true, cwd: process.cwd() };
    await exportState(context, { ...request, observer: live, listed: () => live.close() }, io);
  } finally {
    live.close();
    // A key renewal the last request started is waited for: a rotated key lost fails the run.
    await context.finish(0);
  }
}
