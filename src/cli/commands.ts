import type { Command } from 'commander';
import { registerApplyCommand } from './apply.js';
import { registerAuditCommand } from './audit.js';
import { registerDaemonCommand } from './daemon.js';
import { registerDemoCommand } from './demo.js';
import { registerEmulatorCommand } from './emulator.js';
import { registerExportCommand } from './export.js';
import type { CommandContext } from './command-context.js';
import { registerPlanCommand } from './plan.js';
import { registerSchemaCommand } from './schema.js';
import { registerSyncCommand } from './sync.js';
import { registerValidateCommand } from './validate.js';
import { registerVersionCommand } from './version-command.js';


/** One file per command; each registers itself here. */
export function registerCommands(program: Command, ctx: CommandContext): void {
  registerValidateCommand(program, ctx);
  registerPlanCommand(program, ctx);
  registerSyncCommand(program, ctx);
  registerApplyCommand(program, ctx);
  registerExportCommand(program, ctx);
  registerSchemaCommand(program, ctx);
  registerDaemonCommand(program, ctx);
  registerEmulatorCommand(program, ctx);
  registerDemoCommand(program, ctx);
  registerAuditCommand(program, ctx);
  registerVersionCommand(program, ctx);
}
