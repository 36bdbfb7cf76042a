import { Command, CommanderError } from 'commander';
import { exitCodes, InvalidInputError, UsageError } from '../errors.js';
import { annotateDiagnostics } from './annotations.js';
import { holdsLiveData, registerCommands } from './commands.js';
import { commandNamed, foreignFlagMessage } from './foreign-flags.js';
import { processIo, type CliIo } from './io.js';
import { errText, redactedIo } from './output.js';
import { reportError, wantsJson } from './report-error.js';
import { version } from './version.js';

/**
 * The CLI entry: builds the command tree, runs it, and maps every outcome to an exit code.
 * It is the only place that calls process.exit: one exit point.
 */
export async function main(argv: readonly string[]): Promise<void> {
  // A reader that goes away (`amsync sync | head`) does not stop the run: what was started
  // finishes, and the exit code still says how it went.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') return;
    throw error;
  });
  // Before the work: the heap grows with the live data, not with the host's memory.
  if (holdsLiveData(argv.slice(2))) (await import('./heap-growth.js')).limitHeapGrowth();
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
export async function run(argv: readonly string[], given: CliIo): Promise<number> {
  // Every write goes through the one redaction step, whatever the text was built from.
  const io = redactedIo(given);
  const args = argv.slice(2);
  // `-v` as well as commander's `-V, --version` (and the `version` command).
  if (args.length === 1 && args[0] === '-v') {
    io.stdout.write(`${version}\n`);
    return exitCodes.ok;
  }
  let exitCode: number = exitCodes.ok;
  const setExitCode = (code: number) => {
    exitCode = code;
  };
  // A bare `amsync` is a request for help, not a mistake (git, kubectl and terraform agree).
  if (args.length === 0) {
    io.stdout.write((await buildProgram(io, { setExitCode })).helpInformation());
    return exitCodes.ok;
  }
  // Only the command asked for is loaded, when the first word names one. Commander's own error
  // message waits: a flag of another command gets an explanation instead.
  let commanderMessage = '';
  const program = await buildProgram(io, { setExitCode }, args[0], (text) => (commanderMessage += text));
  try {
    await program.parseAsync([...argv]);
    io.stderr.write(commanderMessage);
    return exitCode;
  } catch (caught) {
    const error = await explainForeignFlag(caught, io, args);
    if (error === caught) io.stderr.write(commanderMessage);
    if (error instanceof InvalidInputError) annotateDiagnostics(io, error.diagnostics);
    // A message may quote what the service said: control and bidi characters escaped too.
    const stderr = { write: (text: string) => io.stderr.write(errText(text)) };
    return reportError(error, { stdout: io.stdout, stderr, json: wantsJson(argv), stdoutUsed: io.stdoutUsed() });
  }
}

/**
 * The command tree, writing to `io`: every command, or only `command` when it names one.
 * Exported for the test that checks every command's help.
 */
export async function buildProgram(
  io: CliIo,
  ctx: { setExitCode(code: number): void },
  command?: string,
  outputError: (text: string) => void = (text) => io.stderr.write(text),
): Promise<Command> {
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
      outputError: (text) => outputError(text),
    });
  await registerCommands(program, { ...ctx, io }, command);
  return program;
}

/**
 * Commander's unknown option, when another command has that flag: a usage error (64) that
 * says which command takes it and what it does. Any other error is returned as it is.
 */
async function explainForeignFlag(error: unknown, io: CliIo, args: readonly string[]): Promise<unknown> {
  if (!(error instanceof CommanderError) || error.code !== 'commander.unknownOption') return error;
  const flag = /unknown option '(.*)'/.exec(error.message)?.[1];
  if (flag === undefined) return error;
  // Every command, to know which of them take the flag (an error path: the cost of loading them is paid here only).
  const all = await buildProgram(io, { setExitCode: () => undefined });
  const explanation = foreignFlagMessage(all, commandNamed(all, args), flag);
  return explanation === undefined ? error : new UsageError(`unknown option '${flag}': ${explanation}`);
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
