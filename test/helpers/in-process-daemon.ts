import type { ServiceContext } from '../../src/cli/service-context.js';
import { auditTrigger, startDaemon, type DaemonDeps, type DaemonOptions, type RunningDaemon } from '../../src/daemon/index.js';
import { FakeScheduler, FakeWatcher } from './daemon-fakes.js';

/** What a test gives: the context's own parts come from it, the rest is the test's or a default. */
export type InProcessDaemonParts = Omit<Partial<DaemonDeps>, 'options'> & Pick<DaemonDeps, 'logger' | 'metrics'> & { readonly options: Partial<DaemonOptions> & Pick<DaemonOptions, 'file'> };

/**
 * The daemon in process over one service context, wired as `amsync daemon` wires its sync (the
 * dry-run flag, the approvals read, the run's reasons as the audit trigger, the run's clock),
 * with a schedule a year away, hand-driven triggers (a fake cron and watcher, no signals) and
 * an HTTP port the system picks; `parts` overrides any of it. Waits for the first run.
 */
export async function startInProcessDaemon(ctx: ServiceContext, parts: InProcessDaemonParts): Promise<RunningDaemon> {
  const daemon = await startDaemon({
    loadDesired: () => ctx.loadDesired(),
    sync: (desired, options) => ctx.sync(desired, { dryRun: options.dryRun, approvals: options.approvals, trigger: auditTrigger(options.reasons), ...(options.now ? { now: options.now } : {}) }),
    signals: null,
    scheduler: new FakeScheduler().factory,
    watcher: new FakeWatcher().factory,
    ...parts,
    options: { schedule: '0 0 1 1 *', listen: '127.0.0.1:0', mode: 'apply', debounceMs: 0, shutdownGraceMs: 5_000, ...parts.options },
  });
  await daemon.idle();
  return daemon;
}
