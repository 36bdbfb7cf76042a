import type { CliIo } from './io.js';

/** What a command gets from the entry: its streams and environment, and a way to set a success path's exit code. */
export interface CommandContext {
  readonly io: CliIo;
  setExitCode(code: number): void;
}
