import { Option, type Command } from 'commander';
import { z } from 'zod';
import { UsageError } from '../errors.js';
import { quote } from '../spec/describe-value.js';
import { checkValue, parseText, rules, type FieldRule } from '../settings/field-rules.js';
import { loadSettings } from '../settings/load-settings.js';
import type { DaemonMode, LogLevel, Settings } from '../settings/settings.js';
import { logLevels } from '../settings/settings.js';
import type { SettingsLayer } from '../settings/settings-schema.js';
import { setIn } from '../settings/env-settings.js';

export const outputFormats = ['text', 'json', 'markdown'] as const;
export type OutputFormat = (typeof outputFormats)[number];

type Env = Readonly<Record<string, string | undefined>>;

/** The options addServiceOptions registers, as commander hands them over (camelCase). */
export interface ServiceOptions {
  readonly file?: string;
  readonly url?: string;
  readonly tokenFile?: string;
  readonly settings?: string;
  readonly json?: boolean;
  readonly format?: OutputFormat;
  readonly out?: string;
  readonly detailedExitcode?: boolean;
  readonly maxDeletes?: number;
  readonly prune?: boolean;
  readonly rate?: number;
  readonly concurrency?: number;
  readonly pageSize?: number;
  readonly tokensDir?: string;
  readonly stateFile?: string;
  readonly logLevel?: LogLevel;
  readonly allowInsecureHttp?: boolean;
  readonly caFile?: string;
  /** Daemon flags, when the command registers them; checked here like the others. */
  readonly listen?: string;
  readonly schedule?: string;
  readonly mode?: DaemonMode;
  /** Only ever set by someone trying `--token`, which is refused. */
  readonly token?: unknown;
}

/** "Expected `--rate` to be a number greater than 0, got 'abc'" — loud, names the flag. */
export function badFlag(flag: string, expected: string, got: unknown): UsageError {
  return new UsageError(`Expected \`${flag}\` to be ${expected}, got ${typeof got === 'string' ? quote(got) : String(got)}`, 'bad_flag_value');
}

/** A commander argParser that checks a flag's value against its settings rule. */
function checked<T>(flag: string, rule: FieldRule<T>): (value: string) => T {
  return (value) => {
    const parsed = parseText(rule, value);
    if (!parsed.ok) throw badFlag(flag, parsed.expected, value);
    return parsed.value;
  };
}

function tokenFlagError(): UsageError {
  return new UsageError(
    'there is no --token flag: a token on the command line leaks into shell history and process lists; set AMSYNC_TOKEN, or use --token-file PATH',
    'token_flag',
  );
}

/**
 * Registers the options of every command that talks to the service (DESIGN.md §5). Values are
 * checked as they are parsed, so a bad one is a UsageError (exit 64) naming the flag.
 */
export function addServiceOptions(cmd: Command): Command {
  cmd
    .option('-f, --file <FILE>', 'desired-state file (default: $AMSYNC_FILE, else ./access.yaml)')
    .option('--url <URL>', 'base URL of the service (AMSYNC_URL); no default', checked('--url', rules.url))
    .option('--token-file <PATH>', 'file holding the bearer token, re-read on 401 (AMSYNC_TOKEN_FILE); the token itself only via AMSYNC_TOKEN', checked('--token-file', rules.path))
    .option('--settings <FILE>', 'settings file (AMSYNC_SETTINGS); see config/default.yaml')
    .option('--json', 'print one JSON document on stdout (same as --format json)')
    .addOption(new Option('--format <FORMAT>', 'output: text, json or markdown (default: text)').argParser(checked('--format', formatRule)))
    .option('--out <PLANFILE>', 'also save the plan to PLANFILE, for `amsync apply`')
    .option('--detailed-exitcode', 'exit 2 when changes are pending (dry-run)')
    .option('--max-deletes <N>', 'refuse a plan with more deletes than N (AMSYNC_MAX_DELETES; default 10)', checked('--max-deletes', rules.int0))
    .option('--prune', 'delete remote items that are not declared, for both kinds')
    .option('--rate <N>', 'ceiling in requests per second (AMSYNC_RATE; default: none, adaptive)', checked('--rate', rules.positiveNumber))
    .option('--concurrency <N>', 'requests in flight at most (AMSYNC_CONCURRENCY; default 64)', checked('--concurrency', rules.int1))
    .option('--page-size <N>', 'items per list page (AMSYNC_PAGE_SIZE; default 100)', checked('--page-size', rules.int1))
    .option('--tokens-dir <DIR>', 'write new apikey tokens here, one 0600 file each (AMSYNC_TOKENS_DIR)', checked('--tokens-dir', rules.path))
    .option('--state-file <PATH>', 'password fingerprints of the last apply (AMSYNC_STATE_FILE; default .amsync/state.json)', checked('--state-file', rules.path))
    .option('--log-level <LEVEL>', `${logLevels.join(', ')} (AMSYNC_LOG_LEVEL; default info)`, checked('--log-level', rules.logLevel))
    .option('--allow-insecure-http', 'allow plain http:// to a host that is not loopback (AMSYNC_ALLOW_INSECURE_HTTP)')
    .option('--ca-file <PATH>', 'PEM bundle of a private CA (AMSYNC_CA_FILE); TLS verification stays on', checked('--ca-file', rules.path))
    // A trap, hidden from help: a token must never be a command-line argument (DESIGN.md §4).
    .addOption(
      new Option('--token [TOKEN]').hideHelp().argParser(() => {
        throw tokenFlagError();
      }),
    )
    .hook('preAction', (command) => {
      if (command.opts<ServiceOptions>().token !== undefined) throw tokenFlagError();
    });
  return cmd;
}

const formatRule: FieldRule<OutputFormat> = {
  schema: z.enum(outputFormats),
  expected: `one of ${outputFormats.join(', ')}`,
  fromText: (text) => ((outputFormats as readonly string[]).includes(text) ? text : undefined),
};

/** `-f`: the flag, else AMSYNC_FILE, else ./access.yaml. */
export function resolveDesiredFile(opts: Pick<ServiceOptions, 'file'>, env: Env): string {
  return opts.file ?? (env.AMSYNC_FILE || 'access.yaml');
}

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

/** Flags and the settings they set; each value is re-checked in case it did not come through commander. */
const flagTargets: readonly { key: keyof ServiceOptions; flag: string; path: readonly string[]; rule: FieldRule<unknown> }[] = [
  { key: 'url', flag: '--url', path: ['url'], rule: rules.url },
  { key: 'tokenFile', flag: '--token-file', path: ['tokenFile'], rule: rules.path },
  { key: 'stateFile', flag: '--state-file', path: ['stateFile'], rule: rules.path },
  { key: 'tokensDir', flag: '--tokens-dir', path: ['tokensDir'], rule: rules.path },
  { key: 'caFile', flag: '--ca-file', path: ['http', 'caFile'], rule: rules.path },
  { key: 'rate', flag: '--rate', path: ['rate'], rule: rules.positiveNumber },
  { key: 'concurrency', flag: '--concurrency', path: ['concurrency'], rule: rules.int1 },
  { key: 'pageSize', flag: '--page-size', path: ['pageSize'], rule: rules.int1 },
  { key: 'maxDeletes', flag: '--max-deletes', path: ['maxDeletes'], rule: rules.int0 },
  { key: 'logLevel', flag: '--log-level', path: ['logLevel'], rule: rules.logLevel },
  { key: 'listen', flag: '--listen', path: ['daemon', 'listen'], rule: rules.listen },
  { key: 'schedule', flag: '--schedule', path: ['daemon', 'schedule'], rule: rules.cron },
  { key: 'mode', flag: '--mode', path: ['daemon', 'mode'], rule: rules.mode },
];

/** The settings layer the flags make; a bad value is a UsageError naming the flag. */
export function settingsFromFlags(opts: ServiceOptions): SettingsLayer {
  if (opts.token !== undefined) throw tokenFlagError();
  const layer: Record<string, unknown> = {};
  for (const target of flagTargets) {
    const value = opts[target.key];
    if (value === undefined) continue;
    const parsed = checkValue(target.rule, value);
    if (!parsed.ok) throw badFlag(target.flag, parsed.expected, value);
    setIn(layer, target.path, parsed.value);
  }
  // A switch only ever turns this on; leaving it out keeps the lower layers' choice.
  if (opts.allowInsecureHttp === true) setIn(layer, ['http', 'allowInsecureHttp'], true);
  return layer as SettingsLayer;
}

/**
 * Settings for a command: built-in defaults < --settings FILE (or AMSYNC_SETTINGS) <
 * AMSYNC_* environment < flags. Exit 64 for a bad flag, 65 for a bad file or variable.
 */
export async function resolveSettings(opts: ServiceOptions, env: Env): Promise<Settings> {
  const flags = settingsFromFlags(opts);
  return loadSettings({ ...(opts.settings !== undefined ? { settingsFile: opts.settings } : {}), env, flags });
}
