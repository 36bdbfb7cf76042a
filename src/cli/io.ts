import type { ScheduleFactory } from '../daemon/index.js';
import { systemTimers, type Timers } from '../time/index.js';

export type Env = Readonly<Record<string, string | undefined>>;

/** Where the CLI writes: process.stdout/stderr, or a test's capture. */
export interface OutputStream {
  /** false: the stream is full; wait for `drain` (when it has `once`) before writing more. */
  write(chunk: string): boolean;
  /** Present on a real stream: a long output (an export) waits for `drain` after a full write. */
  once?(event: 'drain', listener: () => void): unknown;
  /** A terminal: colour, the confirmation and the progress line only there. */
  readonly isTTY?: boolean;
  readonly columns?: number;
  readonly rows?: number;
}

/** Where the confirmation is read from. */
export type InputStream = NodeJS.ReadableStream & { readonly isTTY?: boolean };

/**
 * Everything a command reads from or writes to the outside besides files and the network:
 * the CLI is a function of (argv, io) → exit code, so tests run it in-process.
 * Commands never touch `process.stdout`, `process.stderr`, `process.stdin` or `process.env`;
 * only the daemon and the emulator keep listening for process signals.
 */
export interface CliIo {
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
  readonly stdin: InputStream;
  readonly env: Env;
  /** The clock of "still creating… [10s elapsed]" and the progress line; tests drive it. */
  readonly timers: Timers;
  /**
   * Where SIGINT, SIGTERM and SIGHUP come from (Ctrl-C during sync or apply, the daemon's and
   * the emulator's stop); tests that run the CLI in-process send them. @default process
   */
  readonly signals?: NodeJS.EventEmitter;
  /** The daemon's cron; tests fire it by hand. @default node-cron */
  readonly scheduler?: ScheduleFactory;
}

export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env, timers: systemTimers };
}

/** A person at a terminal, who can answer a question and sees what is printed. */
export function isInteractive(io: CliIo): boolean {
  return io.stdin.isTTY === true && io.stdout.isTTY === true;
}

/** Colour only for a terminal, and never when NO_COLOR is set (https://no-color.org). */
export function useColor(stream: OutputStream, env: Env): boolean {
  return stream.isTTY === true && !env.NO_COLOR;
}
