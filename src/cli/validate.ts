import type { Command } from 'commander';
import { InvalidInputError } from '../errors.js';
import { formatDiagnostic } from '../model/index.js';
import { resolveDesiredSource } from '../settings/index.js';
import { annotateDiagnostics } from './annotations.js';
import type { CommandContext } from './command-context.js';
import { collectFiles } from './shared-options.js';
import { errText } from './output.js';

interface ValidateOptions {
  readonly file?: string | readonly string[];
  readonly recursive?: boolean;
  /** `--targets FILE`: also check the targets file, and the desired file's `targets:` against it. */
  readonly targets?: string;
  readonly json?: boolean;
  readonly settings?: string;
  readonly requireSecrets?: boolean;
}

/**
 * `amsync validate [-f FILE] [--json] [--settings FILE] [--require-secrets]`: checks the
 * desired-state file, and the settings (file and AMSYNC_* environment), offline. It never
 * opens a connection: nothing here imports the service client. Like `terraform validate`, it
 * passes without the secrets at hand (a missing one is a warning) unless --require-secrets.
 */
export function registerValidateCommand(program: Command, ctx: CommandContext): void {
  const { io } = ctx;
  program
    .command('validate')
    .description('check a desired-state file (and the settings) offline; sends nothing')
    .option('-f, --file <FILE>', 'desired-state file, or a folder of them; repeat for several files, each owning its items (default: $AMSYNC_FILE, else ./access.yaml)', collectFiles)
    .option('--recursive', "read the subfolders of a folder given to -f too (names starting with '.' are skipped)")
    .option('--json', 'print one JSON document: {valid, file, counts, warnings, errors}')
    .option('--settings <FILE>', 'also check this settings file (AMSYNC_SETTINGS)')
    .option('--require-secrets', 'fail (65) when a password variable is unset or a secret file unreadable, as plan and sync do; by default that is a warning, so CI jobs without secrets can validate')
    .option('--targets <FILE>', 'also check this targets file, and the `targets:` of the desired file against it (AMSYNC_TARGETS)')
    .action(async (opts: ValidateOptions) => {
      // Deep modules, loaded here: a cold validate loads neither the service client nor the other reports.
      const [{ isDesiredFinding, validateFiles }, { plural, validateSummaryLine }] = await Promise.all([import('../app/validate-files.js'), import('../report/validate-summary.js')]);
      const targetsFile = opts.targets ?? (io.env.AMSYNC_TARGETS || undefined);
      const request = { source: resolveDesiredSource(opts, io.env), settingsFile: opts.settings, targetsFile, requireSecrets: opts.requireSecrets === true };
      const report = await validateFiles(request, io.env);
      if (opts.json === true) io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      if (!report.valid) {
        // The entry prints these to stderr and exits 65.
        const inFile = report.errors.filter(isDesiredFinding).length;
        const inTargets = report.fleet !== undefined && report.errors.some((d) => d.position?.file === report.fleet!.file || d.message.includes(report.fleet!.file));
        const what = inFile > 0 ? report.file : inTargets ? report.fleet!.file : 'settings';
        throw new InvalidInputError(`${what}: invalid — ${plural(report.errors.length, 'error')}; nothing was sent`, [...report.errors, ...report.warnings], inFile > 0 ? 'desired_invalid' : 'settings_invalid');
      }
      for (const w of report.warnings) io.stderr.write(errText(`${formatDiagnostic(w)}\n`));
      annotateDiagnostics(io, report.warnings);
      if (opts.json !== true) io.stdout.write(`${validateSummaryLine(report)}\n`);
    });
}
