import { Option, type Command } from 'commander';
import * as z from 'zod';
import { UsageError } from '../errors.js';
import { badFlag, checkedFlag, lazyRule, refreshTokenFlagError, settingFlag, tokenFlagError, type FieldRule } from '../settings/index.js';
import type { SettingFlagValues } from '../settings/index.js';

export const outputFormats = ['text', 'json', 'markdown'] as const;
export type OutputFormat = (typeof outputFormats)[number];

/** The options the commands that talk to the service register, as commander hands them over (camelCase). */
export interface ServiceOptions extends SettingFlagValues {
  /** `-f`, given once or several times (commander collects them). */
  readonly file?: string | readonly string[];
  /** `--recursive`: folders given to -f are read with their subfolders. */
  readonly recursive?: boolean;
  readonly json?: boolean;
  readonly format?: OutputFormat;
  readonly out?: string;
  readonly detailedExitcode?: boolean;
  readonly prune?: boolean;
}

/** Registers settings' flags from the option table: help, placeholder and check come from each row. */
export function addSettingFlags(cmd: Command, ...flags: readonly `--${string}`[]): Command {
  for (const flag of flags) {
    const { flags: text, help, parse } = settingFlag(flag);
    cmd.addOption(parse === undefined ? new Option(text, help) : new Option(text, help).argParser(parse));
  }
  return cmd;
}

/** `-f`, repeatable, and `--recursive`: the desired-state file, files or folders. */
export function addFileOption(
  cmd: Command,
  description = 'desired-state file, or a folder of them (every *.yaml and *.yml, by name); repeat for several files, each owning its items (default: $AMSYNC_FILE, several separated by the path delimiter, else ./access.yaml)',
): Command {
  return cmd
    .option('-f, --file <FILE>', description, collectFiles)
    .option('--recursive', "read the subfolders of a folder given to -f too (names starting with '.' are skipped)");
}

/** Commander's parser for a repeatable -f. */
export function collectFiles(value: string, previous: readonly string[] | string | undefined): string[] {
  return [...(previous === undefined ? [] : typeof previous === 'string' ? [previous] : previous), value];
}

/**
 * How to reach the service and how hard to press it: every command that talks to it. Values
 * are checked as they are parsed, so a bad one is a UsageError (exit 64) naming the flag.
 */
export function addConnectionOptions(cmd: Command): Command {
  addSettingFlags(cmd, '--url', '--token-file', '--refresh-token-file')
    .option('--settings <FILE>', 'settings file (AMSYNC_SETTINGS); see config/default.yaml');
  addSettingFlags(cmd, '--rate', '--concurrency', '--page-size', '--list-deadline-ms', '--max-response-bytes', '--log-level', '--allow-insecure-http', '--ca-file')
    // A trap, hidden from help: a token must never be a command-line argument (README, "Passwords and tokens").
    .addOption(
      new Option('--token [TOKEN]').hideHelp().argParser(() => {
        throw tokenFlagError();
      }),
    )
    .addOption(
      new Option('--refresh-token [KEY]').hideHelp().argParser(() => {
        throw refreshTokenFlagError();
      }),
    )
    .hook('preAction', (command) => {
      if (command.opts<ServiceOptions>().token !== undefined) throw tokenFlagError();
      if (command.opts<ServiceOptions>().refreshToken !== undefined) throw refreshTokenFlagError();
    });
  return cmd;
}

/** What lives beside the service: password fingerprints and apikey token files (commands that write). */
export function addLocalStateOptions(cmd: Command): Command {
  return addSettingFlags(cmd, '--tokens-dir', '--kubernetes-secret', '--state-file');
}

/** `--lock-timeout` and `--audit-log`: commands that write (sync, apply, daemon) take the writer lock and audit each write. */
export function addWriterOptions(cmd: Command): Command {
  return addSettingFlags(cmd, '--lock-timeout', '--audit-log');
}

/** `--json` and `--format`: commands that print a report. */
export function addOutputOptions(cmd: Command): Command {
  return cmd
    .option('--json', 'print one JSON document on stdout (same as --format json)')
    .addOption(new Option('--format <FORMAT>', 'output: text, json or markdown (default: text)').argParser(checkedFlag('--format', formatRule)));
}

/** `--prune` and `--max-deletes`: what a plan may delete (plan, sync, daemon). */
export function addDeleteOptions(cmd: Command): Command {
  return addSettingFlags(cmd, '--max-deletes').option('--prune', 'delete remote items that are not declared, for both kinds');
}

/** `--out` and `--detailed-exitcode`: a plan to review (plan, sync --dry-run). */
export function addPlanOutputOptions(cmd: Command): Command {
  return cmd
    .option('--out <PLANFILE>', 'also save the plan to PLANFILE, for `amsync apply` (with a dry-run)')
    .option('--detailed-exitcode', 'exit 2 when changes are pending (dry-run)');
}

/**
 * Flags users reach for that a command has no use for: refused with why and what to do
 * instead (exit 64), and hidden from its help, which lists only what the command accepts.
 */
export function refuseOptions(cmd: Command, refused: readonly { readonly flags: string; readonly message: string }[]): Command {
  for (const { flags, message } of refused) {
    cmd.addOption(
      new Option(flags).hideHelp().argParser(() => {
        throw new UsageError(message, 'conflicting_flags');
      }),
    );
  }
  return cmd;
}

const formatRule: FieldRule<OutputFormat> = lazyRule({
  schema: () => z.enum(outputFormats),
  expected: `one of ${outputFormats.join(', ')}`,
  fromText: (text) => ((outputFormats as readonly string[]).includes(text) ? text : undefined),
});

/** `--json` is `--format json`; with `--format text` or `markdown` it is a contradiction. */
export function resolveFormat(opts: Pick<ServiceOptions, 'json' | 'format'>): OutputFormat {
  if (opts.format !== undefined && !(outputFormats as readonly string[]).includes(opts.format)) {
    throw badFlag('--format', formatRule.expected, opts.format);
  }
  if (opts.json === true && opts.format !== undefined && opts.format !== 'json') {
    throw new UsageError(`--json conflicts with --format ${opts.format}: use one of them`, 'conflicting_flags');
  }
  return opts.json === true ? 'json' : (opts.format ?? 'text');
}
