import type { Command } from 'commander';
import { registerEmulatorCommand } from './emulator.js';
import { registerValidateCommand } from './validate.js';

/** What a command may tell the entry besides throwing: the exit code of a success path. */
export interface CommandContext {
  setExitCode(code: number): void;
}

/** One file per command; each registers itself here. */
export function registerCommands(program: Command, ctx: CommandContext): void {
  registerValidateCommand(program, ctx);
  registerEmulatorCommand(program, ctx);
}
