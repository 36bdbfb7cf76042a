import { Command, CommanderError } from 'commander';
import { AmsyncError, exitCodeFor, exitCodes, InvalidInputError } from '../errors.js';
import { annotateDiagnostics } from './annotations.js';
import { formatDiagnostic } from './format-diagnostic.js';
import { registerCommands } from './commands.js';
import { processIo, type CliIo } from './io.js';
import { version } from './version.js';

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
  const code = await run(argv, processIo());
  // Let stdout/stderr drain before leaving; process.exit would cut piped output short.
  process.exitCode = code;
  await flushStdio();
  process.exit(code);
}

/**
 * Runs the CLI and returns the exit code, without exiting: `argv` as process.argv has it
 * (node, script, arguments...), every stream and the environment from `io`. The tests call
 * it in-process (test/helpers/in-process.ts).
 */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  let exitCode: number = exitCodes.ok;
  const program = buildProgram(io, {
    setExitCode: (code: number) => {
      exitCode = code;
    },
  });
  const args = argv.slice(2);
  // A bare `amsync` is a request for help, not a mistake (git, kubectl and terraform agree).
  if (args.length === 0) {
    io.stdout.write(program.helpInformation());
    return exitCodes.ok;
  }
  // `-v` as well as commander's `-V, --version` (and the `version` command).
  if (args.length === 1 && args[0] === '-v') {
    io.stdout.write(`${version}\n`);
    return exitCodes.ok;
  }
  try {
    await program.parseAsync([...argv]);
    return exitCode;
  } catch (error) {
    if (error instanceof InvalidInputError) annotateDiagnostics(io, error.diagnostics);
    return reportError(error, io);
  }
}

/** The command tree, writing to `io`; exported for the test that checks every command's help. */
export function buildProgram(io: CliIo, ctx: { setExitCode(code: number): void }): Command {
  const program = new Command('amsync')
    .description('Keep the Access Management Service in the state a YAML file describes.')
    .version(version, '-V, --version', 'print the version (also -v, amsync version)')
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      getOutHelpWidth: () => io.stdout.columns ?? 80,
      getErrHelpWidth: () => io.stderr.columns ?? 80,
    });
  registerCommands(program, { ...ctx, io });
  return program;
}

function reportError(error: unknown, io: CliIo): number {
  const stderr = io.stderr;
  if (error instanceof CommanderError) {
    // Help and version are successes; every other commander error is a bad command line.
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') {
      return exitCodes.ok;
    }
    return exitCodes.usage;
  }
  if (error instanceof InvalidInputError) {
    stderr.write(`error: ${error.message}\n`);
    for (const d of error.diagnostics) stderr.write(`${formatDiagnostic(d)}\n`);
    return exitCodeFor(error);
  }
  if (error instanceof AmsyncError) {
    stderr.write(`error: ${error.message}\n`);
    return exitCodeFor(error);
  }
  // An unexpected error is a bug; print its stack (it never holds a secret: secrets are
  // Secret objects that render as [redacted]).
  stderr.write(`error: unexpected failure: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
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
