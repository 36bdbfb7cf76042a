import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';
import { prettyFactory } from 'pino-pretty';
import { scrub } from '../secrets/index.js';
import { jsonSafe } from '../text/index.js';

export type { Logger } from 'pino';

/**
 * Paths pino blanks out in every log line, on top of the Secret type (which already prints
 * as [redacted]): a token or password that reaches a log object by any other road is cut here.
 */
export const redactPaths: readonly string[] = [
  'authorization',
  'headers.authorization',
  '*.headers.authorization',
  'password',
  '*.password',
  'token',
  '*.token',
  'body.password',
  'body.token',
  'request.headers.authorization',
];

export interface LoggerOptions {
  level?: LevelWithSilent;
  /** Where lines go; defaults to stderr (stdout carries the plan or report). */
  destination?: DestinationStream;
  /** Pretty lines for people; default: when stderr is a TTY and no destination is given. */
  pretty?: boolean;
  /** Colours in pretty lines. @default true */
  colorize?: boolean;
}

/**
 * A JSON log line on its way out: through the one redaction step (every known secret, in
 * every encoding), and with control and bidi characters as `\uXXXX` escapes (JSON.stringify
 * leaves C1 and bidi controls raw). The line stays the same JSON document.
 */
export function safeLogLine(line: string): string {
  return jsonSafe(scrub(line));
}

// A JSON escape of a control or bidi character (or an escaped backslash, skipped so that
// `\\u001b`, a backslash followed by text, is left alone).
const controlEscape = /\\(?:\\|u(?:00[01][0-9a-f]|007f|00[89][0-9a-f]|061c|200[ef]|202[89a-e]|206[6-9])|[bfnrtv])/gi;

/**
 * The same for pino-pretty, which parses the line and prints its strings as they are: the
 * escapes are escaped once more, so a terminal shows `\u001b` and never receives ESC.
 */
export function safePrettyLine(line: string): string {
  return safeLogLine(line).replace(controlEscape, (escape) => (escape === '\\\\' ? escape : `\\${escape}`));
}

/**
 * The level of a one-shot command's log (`sync`, `plan`, `apply`, `export`): at a terminal the
 * plan, each result and the summary are on stdout already, so the default `info` becomes
 * `warn` there — nothing is logged after the summary but a warning or an error — unless the
 * level was asked for (`--log-level`, `AMSYNC_LOG_LEVEL` or `logLevel` in the settings file).
 * Not at a terminal (CI, a pipe, a collector) the level is the setting's, JSON lines as ever.
 */
export function commandLogLevel<L extends LevelWithSilent>(level: L, options: { readonly terminal: boolean; readonly asked: boolean }): L | 'warn' {
  return options.terminal && !options.asked && level === 'info' ? 'warn' : level;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  const redact = { paths: [...redactPaths], censor: '[redacted]' };
  if (options.destination) {
    if (options.pretty !== true) return pino({ level, redact, hooks: { streamWrite: safeLogLine }, base: { name: 'amsync' } }, options.destination);
    // Formatted in this thread, in order with everything else written to the same stream
    // (a transport's worker thread would interleave with the CLI's own lines).
    const format = prettyFactory({ colorize: options.colorize ?? true, ignore: 'pid,hostname,name' });
    const out = options.destination;
    return pino({ level, redact, hooks: { streamWrite: safePrettyLine } }, { write: (line: string) => out.write(format(line)) });
  }
  const pretty = options.pretty ?? Boolean(process.stderr.isTTY);
  if (pretty) {
    return pino({
      level,
      redact,
      hooks: { streamWrite: safePrettyLine },
      transport: { target: 'pino-pretty', options: { destination: 2, colorize: !process.env.NO_COLOR, ignore: 'pid,hostname,name' } },
    });
  }
  return pino({ level, redact, hooks: { streamWrite: safeLogLine }, base: { name: 'amsync' } }, pino.destination({ dest: 2, sync: true }));
}
