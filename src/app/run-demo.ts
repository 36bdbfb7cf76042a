import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { ChangesFailedError } from '../errors.js';
import { createLogger } from '../obs/index.js';
import type { Report } from '../report/index.js';
import { resolveDesiredSource, resolveSettings } from '../settings/index.js';
import { createServiceContext, type LogStream } from './service-context.js';

type Env = Readonly<Record<string, string | undefined>>;

/** The demo's own secret values for examples/access.yaml: fake, printed nowhere. */
const demoSecrets = { DEPLOY_PASSWORD: 'demo-deploy-password' };

/** The emulator the demo runs against, started by the caller (app/ does not load the emulator). */
export interface DemoService {
  readonly url: string;
  seed(data: { sshUsers: { username: string; level: string; password: string }[]; apikeys: { name: string; superuser: boolean; roles: number[] }[] }): unknown;
  requests(): readonly { readonly method: string }[];
}

export interface DemoRun {
  /** The desired-state file to sync. */
  readonly file: string;
  /** The bearer token the emulator accepts. */
  readonly token: string;
  /** The command's environment: only NO_COLOR is passed on. */
  readonly env: Env;
  readonly stderr: LogStream;
  /** A line for people between the steps. */
  say(line: string): void;
  /** A report, as `amsync sync` and `amsync plan` print it. */
  print(report: Report): void;
}

/**
 * A newcomer's first ten seconds: a real sync (the same code path as `amsync sync`) against
 * the emulator, seeded with drift, then a second plan that shows nothing to do.
 */
export async function runDemo(emulator: DemoService, run: DemoRun): Promise<void> {
  const { file, say } = run;
  const work = await mkdtemp(join(tmpdir(), 'amsync-demo-'));
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

    const env = { ...demoSecrets, AMSYNC_URL: emulator.url, AMSYNC_TOKEN: run.token, NO_COLOR: run.env.NO_COLOR };
    const settings = await resolveSettings({ stateFile: join(work, 'state.json'), tokensDir: join(work, 'tokens') }, env);
    const logger = createLogger({ level: 'warn', destination: run.stderr, pretty: run.stderr.isTTY === true, colorize: !run.env.NO_COLOR });
    const context = createServiceContext({ settings, source: resolveDesiredSource({ file }, env), env, stderr: run.stderr }, { logger });
    try {
      const { desired } = await context.loadDesired();
      say('== 1. amsync sync ==');
      const first = await context.sync(desired, { dryRun: false });
      run.print(asReport(first, false, file));
      if (first.refusal) throw first.refusal;
      const failed = first.results?.filter((r) => r.status !== 'applied').length ?? 0;
      if (failed > 0 || first.plan.problems.length > 0) throw new ChangesFailedError(failed, `the demo sync did not apply cleanly (${failed} failed, ${first.plan.problems.length} not planned)`);
      say('\n== 2. amsync plan (again) ==');
      const second = await context.sync(desired, { dryRun: true });
      run.print(asReport(second, true, file));
      const writes = emulator.requests().filter((r) => r.method !== 'GET').length;
      say(`\nThe emulator saw ${emulator.requests().length} requests, ${writes} of them writes, all from the first sync.`);
      say('Next: `amsync emulator --port 8080 --token dev` in one terminal, then `AMSYNC_URL=http://127.0.0.1:8080 AMSYNC_TOKEN=dev amsync plan -f your-access.yaml`.');
    } finally {
      context.close();
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

function asReport(outcome: { plan: Report['plan']; results?: Report['results']; roleNames?: Report['roleNames'] }, dryRun: boolean, file: string): Report {
  return { plan: outcome.plan, dryRun, results: outcome.results, file, ...(outcome.roleNames === undefined ? {} : { roleNames: outcome.roleNames }) };
}
