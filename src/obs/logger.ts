import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';
import { prettyFactory } from 'pino-pretty';

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

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  const redact = { paths: [...redactPaths], censor: '[redacted]' };
  if (options.destination) {
    if (options.pretty !== true) return pino({ level, redact, base: { name: 'amsync' } }, options.destination);
    // Formatted in this thread, in order with everything else written to the same stream
    // (a transport's worker thread would interleave with the CLI's own lines).
    const format = prettyFactory({ colorize: options.colorize ?? true, ignore: 'pid,hostname,name' });
    const out = options.destination;
    return pino({ level, redact }, { write: (line: string) => out.write(format(line)) });
  }
  const pretty = options.pretty ?? Boolean(process.stderr.isTTY);
  if (pretty) {
    return pino({
      level,
      redact,
      transport: { target: 'pino-pretty', options: { destination: 2, colorize: !process.env.NO_COLOR, ignore: 'pid,hostname,name' } },
    });
  }
  return pino({ level, redact, base: { name: 'amsync' } }, pino.destination({ dest: 2, sync: true }));
}
