import { Command } from 'commander';
import { exitCodes } from '../errors.js';
import { registerCommands } from './commands.js';
import { reportError, trackWrites, wantsJson } from './report-error.js';
import { version } from './version.js';
import { writeErr, writeOut } from './output.js';

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
  const stdout = trackWrites(process.stdout);
  try {
    await program.parseAsync([...argv]);
    return exitCode;
  } catch (error) {
    // Through the one redaction step: an error message may quote what the service said.
    return reportError(error, { stdout: { write: writeOut }, stderr: { write: writeErr }, json: wantsJson(argv), stdoutUsed: stdout.used() });
  } finally {
    stdout.restore();
  }
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
