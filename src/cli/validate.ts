import type { Command } from 'commander';
import { InvalidInputError } from '../errors.js';
import type { DesiredState, Diagnostic } from '../model/index.js';
import { loadSettings } from '../settings/index.js';
import { loadDesired } from '../desired/index.js';
import { annotateDiagnostics } from './annotations.js';
import type { CommandContext } from './command-context.js';
import { formatDiagnostic } from './format-diagnostic.js';
import type { Env } from './io.js';
import { collectFiles, describeSource, resolveDesiredSource } from './shared-options.js';
import { errText } from './output.js';

interface ValidateOptions {
  readonly file?: string | readonly string[];
  readonly recursive?: boolean;
  readonly json?: boolean;
  readonly settings?: string;
  readonly requireSecrets?: boolean;
}

export interface ValidateCounts {
  readonly sshUsers: number;
  readonly apikeys: number;
  /** Items with `ensure: absent`, of both kinds. */
  readonly absent: number;
}

/** What `amsync validate --json` prints. */
export interface ValidateReport {
  readonly valid: boolean;
  /** The -f paths, joined. */
  readonly file: string;
  /** Every file read, when there are several (a folder, or -f given more than once). */
  readonly files?: readonly string[];
  readonly counts: ValidateCounts | null;
  readonly warnings: readonly Diagnostic[];
  readonly errors: readonly Diagnostic[];
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
    .action(async (opts: ValidateOptions) => {
      const report = await validate(opts, io.env);
      if (opts.json === true) io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      if (!report.valid) {
        // The entry prints these to stderr and exits 65.
        const inFile = report.errors.filter((d) => desiredDiagnostics.has(d)).length;
        const what = inFile > 0 ? report.file : 'settings';
        throw new InvalidInputError(`${what}: invalid — ${plural(report.errors.length, 'error')}; nothing was sent`, [...report.errors, ...report.warnings], inFile > 0 ? 'desired_invalid' : 'settings_invalid');
      }
      for (const w of report.warnings) io.stderr.write(errText(`${formatDiagnostic(w)}\n`));
      annotateDiagnostics(io, report.warnings);
      if (opts.json !== true) io.stdout.write(`${summaryLine(report)}\n`);
    });
}

/** Findings about the desired files (the others are about the settings): what the exit message names. */
const desiredDiagnostics = new WeakSet<Diagnostic>();

/** Runs every check and gathers the findings; throws only for what is not about the input. */
export async function validate(opts: ValidateOptions, env: Env): Promise<ValidateReport> {
  const source = resolveDesiredSource(opts, env);
  const file = describeSource(source);
  const errors: Diagnostic[] = [];
  const warnings: Diagnostic[] = [];
  let state: DesiredState | undefined;
  let files: readonly string[] | undefined;
  try {
    const loaded = await loadDesired(source, env, { secrets: opts.requireSecrets === true ? 'require' : 'warn' });
    for (const d of loaded.warnings) desiredDiagnostics.add(d);
    state = loaded.value;
    if (loaded.files.length > 1) files = loaded.files.map((f) => f.file);
    warnings.push(...loaded.warnings);
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    for (const d of error.diagnostics) desiredDiagnostics.add(d);
    split(error.diagnostics, errors, warnings);
  }
  try {
    await loadSettings({ ...(opts.settings !== undefined ? { settingsFile: opts.settings } : {}), env });
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    split(error.diagnostics, errors, warnings);
  }
  return { valid: errors.length === 0, file, ...(files ? { files } : {}), counts: state ? countsOf(state) : null, warnings, errors };
}

function split(diagnostics: readonly Diagnostic[], errors: Diagnostic[], warnings: Diagnostic[]): void {
  for (const d of diagnostics) (d.severity === 'error' ? errors : warnings).push(d);
}

export function countsOf(state: DesiredState): ValidateCounts {
  const absent = [...state.sshUsers, ...state.apikeys].filter((i) => i.ensure === 'absent').length;
  return { sshUsers: state.sshUsers.length, apikeys: state.apikeys.length, absent };
}

/** "access.yaml: valid — 4 SSH users, 3 apikeys (1 absent), 1 warning". */
export function summaryLine(report: ValidateReport): string {
  const c = report.counts ?? { sshUsers: 0, apikeys: 0, absent: 0 };
  const absent = c.absent > 0 ? ` (${c.absent} absent)` : '';
  const warnings = report.warnings.length === 0 ? 'no warnings' : plural(report.warnings.length, 'warning');
  const files = report.files ? ` (${plural(report.files.length, 'file')})` : '';
  return `${report.file}${files}: valid — ${plural(c.sshUsers, 'SSH user')}, ${plural(c.apikeys, 'apikey')}${absent}, ${warnings}`;
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
