import { Readable } from 'node:stream';
import { systemTimers, type Timers } from '../../src/time/timers.js';
import type { CliIo, OutputStream } from '../../src/cli/io.js';
import { run } from '../../src/cli/main.js';
import { root } from './cli.js';

export interface InProcessRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface InProcessOptions {
  /** The whole environment the CLI sees (NO_COLOR=1 is added unless given): nothing leaks in from the test runner. */
  readonly env?: Record<string, string | undefined>;
  /** The working directory during the run. @default the repository root */
  readonly cwd?: string;
  /** What the user types (the confirmation). @default nothing: end of input */
  readonly stdin?: string | Readable;
  /** Both stdout and stdin (and stderr) are a terminal. @default false */
  readonly tty?: boolean;
  /** The clock of the live output; a test's fake drives "still creating…". @default the system's */
  readonly timers?: Timers;
  /** Called with each chunk as it is written (a test that waits for a line). */
  readonly onStdout?: (chunk: string, all: string) => void;
  readonly columns?: number;
}

/** A stream that keeps what is written, as a terminal or a pipe. */
export class CaptureStream implements OutputStream {
  text = '';
  readonly isTTY: boolean;
  readonly columns: number;
  readonly rows = 24;
  readonly #onWrite: ((chunk: string, all: string) => void) | undefined;

  constructor(tty: boolean, columns = 100, onWrite?: (chunk: string, all: string) => void) {
    this.isTTY = tty;
    this.columns = columns;
    this.#onWrite = onWrite;
  }

  write(chunk: string): boolean {
    this.text += chunk;
    this.#onWrite?.(chunk, this.text);
    return true;
  }
}

// One run at a time: the working directory belongs to the whole process.
let queue: Promise<unknown> = Promise.resolve();

/**
 * Runs `amsync ARGS` in this process through `run(argv, io)`: the same code as the binary,
 * with the streams, the environment, the terminal and the clock given here. A few smoke tests
 * still spawn the real binary (test/helpers/cli.ts, runCli).
 */
export function runInProcess(args: readonly string[], options: InProcessOptions = {}): Promise<InProcessRun> {
  const next = queue.then(() => runNow(args, options));
  queue = next.catch(() => undefined);
  return next;
}

async function runNow(args: readonly string[], options: InProcessOptions): Promise<InProcessRun> {
  const tty = options.tty === true;
  const stdout = new CaptureStream(tty, options.columns, options.onStdout);
  const stderr = new CaptureStream(tty, options.columns);
  const stdin = Object.assign(typeof options.stdin === 'object' ? options.stdin : Readable.from(options.stdin === undefined ? [] : [options.stdin]), { isTTY: tty });
  const io: CliIo = { stdout, stderr, stdin, env: { NO_COLOR: '1', ...options.env }, timers: options.timers ?? systemTimers };
  const previous = process.cwd();
  process.chdir(options.cwd ?? root);
  try {
    const code = await run(['node', 'amsync', ...args], io);
    return { code, stdout: stdout.text, stderr: stderr.text };
  } finally {
    process.chdir(previous);
  }
}
