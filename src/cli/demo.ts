import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { ChangesFailedError } from '../errors.js';
import type { Report } from '../report/index.js';
import type { CommandContext } from './command-context.js';
import { useColor, type CliIo } from './io.js';
import { resolveFormat, type OutputFormat } from './shared-options.js';

/** The demo's own secret values for examples/access.yaml: fake, printed nowhere. */
const demoSecrets = { DEPLOY_PASSWORD: 'demo-deploy-password' };

const exampleFile = fileURLToPath(new URL('../../examples/access.yaml', import.meta.url));

export function registerDemoCommand(program: Command, ctx: CommandContext): void {
  program
    .command('demo')
    .description('start the emulator in-process, sync examples/access.yaml to it, and plan again')
    .option('-f, --file <FILE>', 'desired-state file to sync', exampleFile)
    .option('--json', 'print the reports as JSON (same as --format json)')
    .option('--format <FORMAT>', 'text, json or markdown (default: text)')
    .action(async (opts: { file: string; json?: boolean; format?: OutputFormat }) => {
      await runDemo(opts.file, resolveFormat(opts), ctx.io);
    });
}

/**
 * A newcomer's first ten seconds: a real sync (the same code path as `amsync sync`) against
 * the built-in emulator, seeded with drift, then a second plan that shows nothing to do.
 */
async function runDemo(file: string, format: OutputFormat, io: CliIo): Promise<void> {
  const token = randomBytes(16).toString('hex');
  // Loaded here, not at start: only the demo runs the emulator in-process.
  const [{ startEmulator }, { createLogger }, { renderReport }, { createServiceContext }] = await Promise.all([
    import('../emulator/index.js'),
    import('../obs/logger.js'),
    import('./render-report.js'),
    import('./service-context.js'),
  ]);
  const emulator = await startEmulator({ tokens: [token] });
  const work = await mkdtemp(join(tmpdir(), 'amsync-demo-'));
  // The demo is for people: headings go to stdout with text reports, so they stay in order;
  // with JSON or Markdown, stdout keeps only the documents.
  const out = format === 'text' ? io.stdout : io.stderr;
  const color = useColor(io.stdout, io.env);
  const say = (line: string) => out.write(`${color ? `\u001b[1m${line}\u001b[22m` : line}\n`);
  try {
    // Drift, as a service in use would have it: an account made by hand, one that should be
    // gone, and a key with the wrong roles.
    emulator.seed({
      sshUsers: [
        { username: 'intruder', level: 'n1', password: randomBytes(8).toString('hex') },
        { username: 'old-contractor', level: 'n1', password: randomBytes(8).toString('hex') },
      ],
      apikeys: [{ name: 'grafana-readonly', superuser: false, roles: [1, 4] }],
    });
    say(`amsync demo: emulator on ${emulator.url}, seeded with drift (a hand-made user "intruder", a leftover "old-contractor", a key with the wrong roles)`);
    say(`Desired state: ${relative(process.cwd(), file) || file}\n`);

    const env = { ...demoSecrets, AMSYNC_URL: emulator.url, AMSYNC_TOKEN: token, NO_COLOR: io.env.NO_COLOR };
    const context = await createServiceContext({ file, stateFile: join(work, 'state.json'), tokensDir: join(work, 'tokens') }, { env, stderr: io.stderr }, {
      logger: createLogger({ level: 'warn', destination: io.stderr, pretty: io.stderr.isTTY === true, colorize: !io.env.NO_COLOR }),
    });
    try {
      const { desired } = await context.loadDesired();
      say('== 1. amsync sync ==');
      const first = await context.sync(desired, { dryRun: false });
      io.stdout.write(renderReport(asReport(first, false, file), format, { color }));
      if (first.refusal) throw first.refusal;
      const failed = first.results?.filter((r) => r.status !== 'applied').length ?? 0;
      if (failed > 0 || first.plan.problems.length > 0) throw new ChangesFailedError(failed, `the demo sync did not apply cleanly (${failed} failed, ${first.plan.problems.length} not planned)`);
      say('\n== 2. amsync plan (again) ==');
      const second = await context.sync(desired, { dryRun: true });
      io.stdout.write(renderReport(asReport(second, true, file), format, { color }));
      const writes = emulator.requests().filter((r) => r.method !== 'GET').length;
      say(`\nThe emulator saw ${emulator.requests().length} requests, ${writes} of them writes, all from the first sync.`);
      say('Next: `amsync emulator --port 8080 --token dev` in one terminal, then `AMSYNC_URL=http://127.0.0.1:8080 AMSYNC_TOKEN=dev amsync plan -f your-access.yaml`.');
    } finally {
      context.close();
    }
  } finally {
    await emulator.close();
    await rm(work, { recursive: true, force: true });
  }
}

function asReport(outcome: { plan: Report['plan']; results?: Report['results']; roleNames?: Report['roleNames'] }, dryRun: boolean, file: string): Report {
  return { plan: outcome.plan, dryRun, results: outcome.results, file, ...(outcome.roleNames === undefined ? {} : { roleNames: outcome.roleNames }) };
}
