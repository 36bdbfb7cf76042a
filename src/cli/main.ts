import { Command, CommanderError } from 'commander';
import { AmsyncError, exitCodeFor, exitCodes, InvalidInputError } from '../errors.js';
import { formatDiagnostic } from './format-diagnostic.js';
import { registerCommands } from './commands.js';
import { version } from './version.js';
import { writeErr } from './output.js';

/**
 * The CLI entry: builds the command tree, runs it, and maps every outcome to an exit code.
 * It is the only place that calls process.exit (DESIGN.md §2, STYLE.md "one exit point").
 */
export async function main(argv: readonly string[]): Promise<void> {
  // A reader that goes away (`amsync sync | head`) does not stop the run: what was started
  // finishes, and the exit code still says how it went.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') return;
    throw error;
  });
  const code = await run(argv);
  // Let stdout/stderr drain before leaving; process.exit would cut piped output short.
  process.exitCode = code;
  await flushStdio();
  process.exit(code);
}

/** Runs the CLI and returns the exit code, without exiting (main() exits with it). */
export async function run(argv: readonly string[]): Promise<number> {
  const program = new Command('amsync')
    .description('Keep the Access Management Service in the state a YAML file describes.')
    .version(version, '-V, --version')
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => process.stdout.write(s),
      writeErr: (s) => process.stderr.write(s),
    });
  let exitCode: number = exitCodes.ok;
  registerCommands(program, {
    setExitCode: (code: number) => {
      exitCode = code;
    },
  });
  try {
    await program.parseAsync([...argv]);
    return exitCode;
  } catch (error) {
    return reportError(error);
  }
}

function reportError(error: unknown): number {
  if (error instanceof CommanderError) {
    // Help and version are successes; every other commander error is a bad command line.
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') {
      return exitCodes.ok;
    }
    return exitCodes.usage;
  }
  if (error instanceof InvalidInputError) {
    writeErr(`error: ${error.message}\n`);
    for (const d of error.diagnostics) writeErr(`${formatDiagnostic(d)}\n`);
    return exitCodeFor(error);
  }
  if (error instanceof AmsyncError) {
    writeErr(`error: ${error.message}\n`);
    return exitCodeFor(error);
  }
  // An unexpected error is a bug; print its stack (it never holds a secret: secrets are
  // Secret objects that render as [redacted]).
  writeErr(`error: unexpected failure: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  return exitCodes.failure;
}

function flushStdio(): Promise<void> {
  return new Promise((resolve) => {
    let pending = 2;
    const done = () => {
      pending -= 1;
      if (pending === 0) resolve();
    };
    process.stdout.write('', done);
    process.stderr.write('', done);
  });
}
