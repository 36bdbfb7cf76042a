import { CommanderError } from 'commander';
import { AmsyncError, exitCodeFor, exitCodes, InvalidInputError } from '../errors.js';
import { formatDiagnostic, type Diagnostic } from '../model/index.js';

interface Writable {
  write(text: string): unknown;
}

export interface ErrorOutput {
  readonly stdout: Writable;
  readonly stderr: Writable;
  /** `--json` or `--format json` was given: stdout must hold one JSON document. */
  readonly json: boolean;
  /** The command already printed its document on stdout (a report, a validate result). */
  readonly stdoutUsed: boolean;
}

/** What `--json` prints on stdout when a command fails before it printed anything there. */
export interface ErrorDocument {
  readonly error: {
    /** Stable: the error's code (`network`, `listing_incomplete`, `no_url`, `usage`, ...). */
    readonly code: string;
    /** The same one line as on stderr, without `error: `. */
    readonly message: string;
    /** For an invalid file: each finding with its position. */
    readonly diagnostics?: readonly Diagnostic[];
  };
}

const successes = new Set(['commander.helpDisplayed', 'commander.version', 'commander.help']);

/** `--json`, `--format json` or `--format=json` before a `--`. */
export function wantsJson(argv: readonly string[]): boolean {
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--') return false;
    if (arg === '--json' || arg === '--format=json' || (arg === '--format' && argv[i + 1] === 'json')) return true;
  }
  return false;
}

export function errorDocument(error: unknown): ErrorDocument {
  if (error instanceof CommanderError) return { error: { code: 'usage', message: error.message.replace(/^error: /, '') } };
  if (error instanceof InvalidInputError) {
    return { error: { code: error.code, message: error.message, diagnostics: error.diagnostics } };
  }
  if (error instanceof AmsyncError) return { error: { code: error.code, message: error.message } };
  return { error: { code: 'unexpected', message: error instanceof Error ? error.message : String(error) } };
}

/**
 * Prints a failure once and returns its exit code: one `error: ` line on stderr (for an
 * invalid file, its findings below it, none repeating that line) and, with `--json`, the error
 * document on stdout unless the command already printed its own document there.
 */
export function reportError(error: unknown, out: ErrorOutput): number {
  if (error instanceof CommanderError && successes.has(error.code)) return exitCodes.ok;
  if (out.json && !out.stdoutUsed) out.stdout.write(`${JSON.stringify(errorDocument(error), null, 2)}\n`);
  // Commander has printed its own message on stderr already.
  if (error instanceof CommanderError) return exitCodes.usage;
  if (error instanceof AmsyncError) {
    const headline = `error: ${error.message}`;
    out.stderr.write(`${headline}\n`);
    if (error instanceof InvalidInputError) {
      for (const line of error.diagnostics.map(formatDiagnostic)) if (line !== headline) out.stderr.write(`${line}\n`);
    }
    return exitCodeFor(error);
  }
  // An unexpected error is a bug; print its stack (it never holds a secret: secrets are
  // Secret objects that render as [redacted]).
  out.stderr.write(`error: unexpected failure: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  return exitCodes.failure;
}
