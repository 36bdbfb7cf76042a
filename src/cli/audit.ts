import type { Command } from 'commander';
import { auditFilter, parseAuditAction, type AuditFilterFlags } from '../app/index.js';
import { jsonSafe } from '../text/index.js';
import type { CommandContext } from './command-context.js';
import type { CliIo } from './io.js';

export interface AuditOptions extends AuditFilterFlags {
  readonly json?: boolean;
  readonly includeRotated?: boolean;
  readonly settings?: string;
}

/**
 * `amsync audit [FILE]`: the audit log (`auditLog`, README, "Teams and governance") as a table, or as JSON
 * lines with `--json`, filtered by key, action and time. Reads only the file: never the
 * service. A last line cut short (a crash, a full disk) is passed over and said so on stderr.
 */
export function registerAuditCommand(program: Command, ctx: CommandContext): void {
  program
    .command('audit')
    .description('print the audit log of writes (the auditLog setting) as a table, filtered by key, action and time')
    .argument('[FILE]', 'the audit log (default: the auditLog setting: AMSYNC_AUDIT_LOG or --settings FILE)')
    .option('--key <KEY>', 'only lines of this username or apikey name')
    .option('--action <ACTION>', 'only create, update or delete', parseAuditAction)
    .option('--since <TIME>', 'only lines at or after TIME: ISO-8601 (2025-01-31, 2025-01-31T12:00:00Z) or an age (90s, 30m, 24h, 7d, 2w)')
    .option('--until <TIME>', 'only lines at or before TIME (same forms as --since)')
    .option('--json', 'print the matching lines as JSON lines, one audit line each')
    .option('--include-rotated', 'also read the rotated files FILE.N … FILE.1, oldest first')
    .option('--settings <FILE>', 'settings file whose auditLog names the log when FILE is not given (AMSYNC_SETTINGS)')
    .action(async (file: string | undefined, opts: AuditOptions) => {
      await printAudit(file, opts, ctx.io);
    });
}

async function printAudit(file: string | undefined, opts: AuditOptions, io: CliIo): Promise<void> {
  const filter = auditFilter(opts, io.timers.wallNow());
  // Deep modules, loaded here: reading the log needs neither the service client nor the plan's reports.
  const [{ readAudit }, { auditReadWarning, renderAuditTable }] = await Promise.all([import('../app/read-audit.js'), import('../report/render-audit.js')]);
  const read = await readAudit({ file, settingsFile: opts.settings, includeRotated: opts.includeRotated === true, filter }, io.env);
  // --json: one line each, as written; jsonSafe keeps bidi and C1 characters from restyling a terminal.
  if (opts.json === true) for (const line of read.records) io.stdout.write(`${jsonSafe(JSON.stringify(line))}\n`);
  else io.stdout.write(renderAuditTable(read.records));
  const warning = auditReadWarning(read);
  if (warning !== undefined) io.stderr.write(warning);
}
