import { Option, type Command } from 'commander';
import * as z from 'zod';
import { UsageError } from '../errors.js';
import { badFlag, lazyRule, parseText, refreshTokenFlagError, rules, tokenFlagError, type FieldRule, logLevels } from '../settings/index.js';
import type { DaemonMode, LogLevel } from '../settings/index.js';

export const outputFormats = ['text', 'json', 'markdown'] as const;
export type OutputFormat = (typeof outputFormats)[number];

/** The options the commands that talk to the service register, as commander hands them over (camelCase). */
export interface ServiceOptions {
  /** `-f`, given once or several times (commander collects them). */
  readonly file?: string | readonly string[];
  /** `--recursive`: folders given to -f are read with their subfolders. */
  readonly recursive?: boolean;
  readonly url?: string;
  readonly tokenFile?: string;
  readonly refreshTokenFile?: string;
  readonly settings?: string;
  readonly json?: boolean;
  readonly format?: OutputFormat;
  readonly out?: string;
  readonly detailedExitcode?: boolean;
  readonly maxDeletes?: number;
  readonly lockTimeout?: number;
  readonly auditLog?: string;
  readonly prune?: boolean;
  readonly rate?: number;
  readonly concurrency?: number;
  readonly pageSize?: number;
  readonly listDeadlineMs?: number;
  readonly maxResponseBytes?: number;
  readonly tokensDir?: string;
  readonly kubernetesSecret?: string;
  readonly stateFile?: string;
  readonly logLevel?: LogLevel;
  readonly allowInsecureHttp?: boolean;
  readonly caFile?: string;
  /** Daemon flags, when the command registers them; checked here like the others. */
  readonly listen?: string;
  readonly schedule?: string;
  readonly mode?: DaemonMode;
  readonly leaderElect?: string;
  readonly runDeadlineMs?: number;
  /** `--approvals FILE` (daemon). */
  readonly approvals?: string;
  /** Only ever set by someone trying `--token`, which is refused. */
  readonly token?: unknown;
  /** Only ever set by someone trying `--refresh-token`, which is refused. */
  readonly refreshToken?: unknown;
}

/** A commander argParser that checks a flag's value against its settings rule. */
function checked<T>(flag: string, rule: FieldRule<T>): (value: string) => T {
  return (value) => {
    const parsed = parseText(rule, value);
    if (!parsed.ok) throw badFlag(flag, parsed.expected, value);
    return parsed.value;
  };
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
  cmd
    .option('--url <URL>', 'base URL of the service (AMSYNC_URL); no default', checked('--url', rules.url))
    .option('--token-file <PATH>', 'file holding the bearer token, re-read on 401 (AMSYNC_TOKEN_FILE); the token itself only via AMSYNC_TOKEN', checked('--token-file', rules.path))
    .option(
      '--refresh-token-file <PATH>',
      "file holding the integrator key (a refresh token from the service's UI), exchanged for access tokens and renewed; a rotated key is written back (AMSYNC_REFRESH_TOKEN_FILE); the key itself only via AMSYNC_REFRESH_TOKEN",
      checked('--refresh-token-file', rules.path),
    )
    .option('--settings <FILE>', 'settings file (AMSYNC_SETTINGS); see config/default.yaml')
    .option('--rate <N>', 'ceiling in requests per second (AMSYNC_RATE; default: none, adaptive)', checked('--rate', rules.positiveNumber))
    .option('--concurrency <N>', 'requests in flight at most (AMSYNC_CONCURRENCY; default 64)', checked('--concurrency', rules.int1))
    .option('--page-size <N>', "the largest list page asked for; the service's own largest is learned below it (AMSYNC_PAGE_SIZE; default 1000)", checked('--page-size', rules.int1))
    .option('--list-deadline-ms <MS>', 'a listing that takes longer is incomplete and nothing is planned (AMSYNC_LIST_DEADLINE_MS; default 300000)', checked('--list-deadline-ms', rules.int1))
    .option('--max-response-bytes <N>', 'largest answer body read; a larger one is an error (AMSYNC_HTTP_MAX_RESPONSE_BYTES; default 33554432, 32 MiB)', checked('--max-response-bytes', rules.int1))
    .option('--log-level <LEVEL>', `${logLevels.join(', ')} (AMSYNC_LOG_LEVEL; default info)`, checked('--log-level', rules.logLevel))
    .option('--allow-insecure-http', 'allow plain http:// to a host that is not loopback (AMSYNC_ALLOW_INSECURE_HTTP)')
    .option('--ca-file <PATH>', 'PEM bundle of a private CA (AMSYNC_CA_FILE); TLS verification stays on', checked('--ca-file', rules.path))
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
  return cmd
    .option('--tokens-dir <DIR>', 'write new apikey tokens here, one 0600 file each (AMSYNC_TOKENS_DIR)', checked('--tokens-dir', rules.path))
    .option('--kubernetes-secret <NAMESPACE/NAME>', 'write new apikey tokens to this Kubernetes Secret, one data key each (AMSYNC_KUBERNETES_SECRET)', checked('--kubernetes-secret', rules.kubeSecretRef))
    .option('--state-file <PATH>', 'password fingerprints of the last apply (AMSYNC_STATE_FILE; default .amsync/state.json)', checked('--state-file', rules.path));
}

/** `--lock-timeout` and `--audit-log`: commands that write (sync, apply, daemon) take the writer lock and audit each write. */
export function addWriterOptions(cmd: Command): Command {
  return cmd
    .option('--lock-timeout <MS>', 'wait this long for another writer to finish (AMSYNC_LOCK_TIMEOUT_MS; default 0: exit 3 at once)', checked('--lock-timeout', rules.int0))
    .option('--audit-log <FILE>', 'append one JSON line per write attempt and per result to FILE, 0600, rotated by size; read it with `amsync audit` (AMSYNC_AUDIT_LOG)', checked('--audit-log', rules.path));
}

/** `--json` and `--format`: commands that print a report. */
export function addOutputOptions(cmd: Command): Command {
  return cmd
    .option('--json', 'print one JSON document on stdout (same as --format json)')
    .addOption(new Option('--format <FORMAT>', 'output: text, json or markdown (default: text)').argParser(checked('--format', formatRule)));
}

/** `--prune` and `--max-deletes`: what a plan may delete (plan, sync, daemon). */
export function addDeleteOptions(cmd: Command): Command {
  return cmd
    .option('--max-deletes <N>', 'refuse a plan with more deletes than N (AMSYNC_MAX_DELETES; default 10)', checked('--max-deletes', rules.int0))
    .option('--prune', 'delete remote items that are not declared, for both kinds');
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
