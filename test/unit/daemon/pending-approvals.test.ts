import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SyncOutcome } from '../../../src/sync/run-sync.js';
import { startDaemon, type DaemonOptions, type PendingApprovalsEvent, type RunningDaemon } from '../../../src/daemon/index.js';
import type { ApprovalStatus } from '../../../src/model/index.js';
import { createMetrics } from '../../../src/obs/metrics.js';
import { VirtualTime as FakeTimers } from '../../helpers/virtual-time.js';
import { desiredWith, FakeScheduler, FakeWatcher, logSink, outcome } from '../../helpers/daemon-fakes.js';

/** What the daemon does with changes that wait for an approval (DESIGN.md §10), with a fake sync. */

const HASH = '3f9c0a1be27d4410';
const SET = '9a8b7c6d5e4f3a2b';

let dir: string;
const running: RunningDaemon[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-pending-'));
});
afterEach(async () => {
  for (const d of running.splice(0)) await d.stop();
  await rm(dir, { recursive: true, force: true });
});

/** A run that wrote everything but one gated create (approved when `approvals` has HASH). */
function gatedOutcome(approvals: ReadonlySet<string>, dryRun: boolean): SyncOutcome {
  const base = outcome({ changes: [{ kind: 'apikey', action: 'create', key: 'root' }], dryRun });
  const approved = approvals.has(HASH) ? [0] : [];
  const approval: ApprovalStatus = { review: { gates: [{ index: 0, hash: HASH, rules: ['superuser'] }], setHash: SET, violations: [], warnings: [] }, approved, withheld: approved.length ? [] : [0] };
  return { ...base, ...(dryRun ? {} : { results: approved.length ? [{ kind: 'apikey', key: 'root', action: 'create', status: 'applied', approval: HASH }] : [] }), approval };
}

async function start(options: Partial<DaemonOptions>, hook: (e: PendingApprovalsEvent) => void) {
  const log = logSink();
  const seen: ReadonlySet<string>[] = [];
  const scheduler = new FakeScheduler();
  const d = await startDaemon({
    loadDesired: async () => ({ desired: desiredWith(['alice']), watchFiles: [] }),
    sync: async (_desired, o) => {
      seen.push(o.approvals);
      return gatedOutcome(o.approvals, o.dryRun);
    },
    onApprovalsPending: hook,
    logger: log.logger,
    metrics: createMetrics({ version: 'test' }),
    options: { file: 'access.yaml', schedule: '*/5 * * * *', listen: '127.0.0.1:0', mode: 'apply', debounceMs: 0, shutdownGraceMs: 1000, ...options },
    timers: new FakeTimers(),
    signals: null,
    scheduler: scheduler.factory,
    watcher: new FakeWatcher().factory,
  });
  running.push(d);
  await d.idle();
  return { d, log, seen, scheduler };
}

describe('changes waiting for approval in the daemon', () => {
  it('observe mode writes nothing, so nothing is pending and nobody is told', async () => {
    const events: PendingApprovalsEvent[] = [];
    const { d } = await start({ mode: 'observe' }, (e) => events.push(e));
    expect(d.status().pendingApprovals).toEqual([]);
    expect(events).toEqual([]);
  });

  it('a hook that throws is logged and the run still succeeds', async () => {
    const { d, log } = await start({}, () => {
      throw new Error('webhook down');
    });
    expect(d.status()).toMatchObject({ ready: true, pendingApprovals: [HASH], lastOutcome: 'success' });
    expect(log.lines.some((l) => l.msg === 'the approvals-pending hook failed')).toBe(true);
  });

  it('an unusable approvals file approves nothing, says so once, and a fixed one approves', async () => {
    const file = join(dir, 'approvals.yaml');
    await writeFile(file, '- not-a-hash\n');
    const { d, log, seen, scheduler } = await start({ approvalsFile: file }, () => undefined);
    scheduler.fire();
    await d.idle();
    expect(seen.map((s) => [...s])).toEqual([[], []]);
    expect(log.lines.filter((l) => l.code === 'approvals_file')).toHaveLength(1);
    await writeFile(file, `- ${SET}\n- ${HASH}\n`);
    scheduler.fire();
    await d.idle();
    expect([...seen.at(-1)!]).toEqual([SET, HASH]);
    expect(d.status().pendingApprovals).toEqual([]);
    expect(log.lines.some((l) => l.msg === 'the approvals file is usable again')).toBe(true);
  });
});
