import { EventEmitter } from 'node:events';
import { Readable } from 'node:stream';
import { systemTimers, type Timers } from '../../src/time/timers.js';
import type { CliIo, OutputStream } from '../../src/cli/io.js';
import type { ScheduleFactory } from '../../src/daemon/index.js';
import { run } from '../../src/cli/main.js';
import { FakeScheduler } from './daemon-fakes.js';
import { root } from './paths.js';
import { collectLogLine, daemonStarted, type LogLine, type StartedDaemonView } from './spawn.js';

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
  /** Where SIGINT, SIGTERM and SIGHUP come from: the test emits them. @default process */
  readonly signals?: NodeJS.EventEmitter;
  /** The daemon's cron: the test fires it (FakeScheduler). @default node-cron */
  readonly scheduler?: ScheduleFactory;
  /** Called with each chunk as it is written (a test that waits for a line). */
  readonly onStdout?: (chunk: string, all: string) => void;
  /** The same for stderr (the daemon's log lines). */
  readonly onStderr?: (chunk: string, all: string) => void;
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

/**
 * The working directory belongs to the whole process: runs in the same directory may overlap
 * (two writers on one state file, a daemon beside a sync), a run elsewhere waits until they
 * are done.
 */
let current: { cwd: string; runs: number; previous: string } | undefined;
const waiting: (() => void)[] = [];

async function enter(cwd: string): Promise<void> {
  while (current !== undefined && current.cwd !== cwd) await new Promise<void>((resolve) => waiting.push(resolve));
  if (current === undefined) {
    current = { cwd, runs: 0, previous: process.cwd() };
    process.chdir(cwd);
  }
  current.runs += 1;
}

function leave(): void {
  if (current === undefined) return;
  current.runs -= 1;
  if (current.runs > 0) return;
  process.chdir(current.previous);
  current = undefined;
  for (const wake of waiting.splice(0)) wake();
}

/**
 * Runs `amsync ARGS` in this process through `run(argv, io)`: the same code as the binary,
 * with the streams, the environment, the terminal, the clock and the signals given here. A
 * few smoke tests still spawn the real binary (test/helpers/spawn.ts).
 */
export async function runInProcess(args: readonly string[], options: InProcessOptions = {}): Promise<InProcessRun> {
  const tty = options.tty === true;
  const stdout = new CaptureStream(tty, options.columns, options.onStdout);
  const stderr = new CaptureStream(tty, options.columns, options.onStderr);
  const stdin = Object.assign(typeof options.stdin === 'object' ? options.stdin : Readable.from(options.stdin === undefined ? [] : [options.stdin]), { isTTY: tty });
  const io: CliIo = {
    stdout,
    stderr,
    stdin,
    env: { NO_COLOR: '1', ...options.env },
    timers: options.timers ?? systemTimers,
    ...(options.signals ? { signals: options.signals } : {}),
    ...(options.scheduler ? { scheduler: options.scheduler } : {}),
  };
  await enter(options.cwd ?? root);
  try {
    const code = await run(['node', 'amsync', ...args], io);
    return { code, stdout: stdout.text, stderr: stderr.text };
  } finally {
    leave();
  }
}

/** `amsync daemon`, run in this process: its JSON log lines, its signals and its schedule in the test's hands. */
export interface InProcessDaemon extends StartedDaemonView {
  /** The exit code once the daemon has stopped. */
  readonly exit: Promise<number>;
  /** SIGTERM, SIGINT or SIGHUP, as the kubelet or a person sends them. */
  signal(name: 'SIGTERM' | 'SIGINT' | 'SIGHUP'): void;
  /** The cron schedule fires (there is no real cron: the test says when). */
  fireSchedule(): void;
  /** Cleanup: SIGTERM, then SIGINT (a second signal: at once), and waits for the exit. */
  stop(): Promise<void>;
}

/** Starts `amsync daemon ARGS` in-process; resolves once it logs that it started. */
export async function startDaemonInProcess(args: readonly string[], options: Pick<InProcessOptions, 'env' | 'cwd'> = {}): Promise<InProcessDaemon> {
  const signals = new EventEmitter();
  const scheduler = new FakeScheduler();
  const logs: LogLine[] = [];
  let raw = '';
  let partial = '';
  let exited = false;
  const running = runInProcess(['daemon', ...args], {
    ...options,
    signals,
    scheduler: scheduler.factory,
    onStdout: (chunk) => (raw += chunk),
    onStderr: (chunk) => {
      raw += chunk;
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) collectLogLine(logs, line);
    },
  });
  const exit = running.then(
    (r) => {
      exited = true;
      return r.code;
    },
    (error: unknown) => {
      exited = true;
      throw error;
    },
  );
  return {
    ...(await daemonStarted(logs, () => raw, () => exited)),
    exit,
    signal: (name) => void signals.emit(name, name),
    fireSchedule: () => scheduler.fire(),
    async stop() {
      if (exited) return;
      signals.emit('SIGTERM', 'SIGTERM');
      signals.emit('SIGINT', 'SIGINT');
      await exit.catch(() => undefined);
    },
  };
}
