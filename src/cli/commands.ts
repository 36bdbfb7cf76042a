import type { Command } from 'commander';
import { registerApplyCommand } from './apply.js';
import { registerDaemonCommand } from './daemon.js';
import { registerDemoCommand } from './demo.js';
import { registerEmulatorCommand } from './emulator.js';
import { registerExportCommand } from './export.js';
import { registerPlanCommand } from './plan.js';
import { registerSyncCommand } from './sync.js';
import { registerValidateCommand } from './validate.js';

/** What a command may tell the entry besides throwing: the exit code of a success path. */
export interface CommandContext {
  setExitCode(code: number): void;
}

/** One file per command; each registers itself here. */
export function registerCommands(program: Command, ctx: CommandContext): void {
  registerValidateCommand(program, ctx);
  registerPlanCommand(program, ctx);
  registerSyncCommand(program, ctx);
  registerApplyCommand(program, ctx);
  registerExportCommand(program, ctx);
  registerDaemonCommand(program, ctx);
  registerEmulatorCommand(program, ctx);
  registerDemoCommand(program, ctx);
}
