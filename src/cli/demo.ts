import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import type { CommandContext } from './command-context.js';
import { useColor, type CliIo } from './io.js';
import { resolveFormat, type OutputFormat } from './shared-options.js';

const exampleFile = fileURLToPath(new URL('../../examples/access.yaml', import.meta.url));

export function registerDemoCommand(program: Command, ctx: CommandContext): void {
  program
    .command('demo')
    .description('start the emulator in-process, sync examples/access.yaml to it, and plan again')
    .option('-f, --file <FILE>', "desired-state file to sync (default: the package's examples/access.yaml)")
    .option('--json', 'print the reports as JSON (same as --format json)')
    .option('--format <FORMAT>', 'text, json or markdown (default: text)')
    .action(async (opts: { file?: string; json?: boolean; format?: OutputFormat }) => {
      await runDemo(opts.file ?? exampleFile, resolveFormat(opts), ctx.io);
    });
}

/** The demo (app/) against the built-in emulator, started and stopped here. */
async function runDemo(file: string, format: OutputFormat, io: CliIo): Promise<void> {
  const token = randomBytes(16).toString('hex');
  // Loaded here, not at start: only the demo runs the emulator in-process.
  const [{ startEmulator }, { renderReport }, { runDemo: demo }] = await Promise.all([import('../emulator/index.js'), import('../report/index.js'), import('../app/index.js')]);
  const emulator = await startEmulator({ tokens: [token] });
  // The demo is for people: headings go to stdout with text reports, so they stay in order;
  // with JSON or Markdown, stdout keeps only the documents.
  const out = format === 'text' ? io.stdout : io.stderr;
  const color = useColor(io.stdout, io.env);
  try {
    await demo(emulator, {
      file,
      token,
      env: io.env,
      stderr: io.stderr,
      say: (line) => out.write(`${color ? `\u001b[1m${line}\u001b[22m` : line}\n`),
      print: (report) => io.stdout.write(renderReport(report, format, { color })),
    });
  } finally {
    await emulator.close();
  }
}
