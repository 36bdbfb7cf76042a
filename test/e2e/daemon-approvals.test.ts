import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServiceContext, type ServiceContext } from '../../src/cli/service-context.js';
import { type PendingApprovalsEvent, type RunningDaemon } from '../../src/daemon/index.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { createMetrics, type AmsyncMetrics } from '../../src/obs/metrics.js';
import { FakeScheduler, FakeWatcher, logSink } from '../helpers/daemon-fakes.js';
import { parseExposition } from '../helpers/daemon-prom-parse.js';
import { startInProcessDaemon } from '../helpers/in-process-daemon.js';

/**
 * DESIGN.md §10: the daemon never applies a change that escalates privilege by itself. It
 * applies the rest, reports the gated change as pending (the gauge, /readyz, the hook), and
 * applies it once the approvals file it watches lists its hash. The daemon runs in process
 * against the emulator; the test drives its triggers (the watch, the schedule) by hand, so no
 * real timer or file event decides anything.
 */

const TOKEN = 'CANARY-bearer-daemon-approvals-5c2a';
const PASSWORD = 'CANARY-password-daemon-approvals-e81f';

let dir: string;
let emu: RunningEmulator;
let context: ServiceContext | undefined;
let daemon: RunningDaemon | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-daemon-approvals-'));
  await mkdir(join(dir, 'teams'));
  await mkdir(join(dir, 'approvals'));
  emu = await startEmulator({ tokens: [TOKEN] });
});

afterEach(async () => {
  await daemon?.stop();
  context?.close();
  await emu.close();
  daemon = undefined;
  context = undefined;
  await rm(dir, { recursive: true, force: true });
});

const opsFile = 'sshUsers:\n  - username: deploy\n    password: { env: DEPLOY_PASSWORD }\napikeys:\n  - name: ops-root\n    superuser: true\n';

/** `beforeStart` runs once the context is made, before the daemon's first run (it may write the approvals file). */
async function start(ops = opsFile, beforeStart?: (ctx: ServiceContext, approvalsFile: string) => Promise<void>) {
  await writeFile(join(dir, 'teams', 'ops.yaml'), ops);
  await writeFile(join(dir, 'teams', 'policy.yaml'), 'policy:\n  superuser: approve\n');
  const approvalsFile = join(dir, 'approvals', 'approvals.yaml');
  const sink = logSink('debug'); // 'change applied' is a debug line
  const teams = join(dir, 'teams');
  context = await createServiceContext(
    { file: [teams], url: emu.url, stateFile: join(dir, 'state.json') },
    { env: { AMSYNC_TOKEN: TOKEN, DEPLOY_PASSWORD: PASSWORD, AMSYNC_INITIAL_RATE: '1000' }, stderr: process.stderr },
    { logger: sink.logger },
  );
  const ctx = context;
  await beforeStart?.(ctx, approvalsFile);
  const scheduler = new FakeScheduler();
  const watcher = new FakeWatcher();
  const metrics = createMetrics({ version: 'test' });
  const events: PendingApprovalsEvent[] = [];
  // As `amsync daemon` wires it: the approvals the daemon read go to the sync.
  daemon = await startInProcessDaemon(ctx, { onApprovalsPending: (e) => events.push(e), logger: sink.logger, metrics, options: { file: teams, watch: [teams], approvalsFile }, scheduler: scheduler.factory, watcher: watcher.factory });
  return { d: daemon, approvalsFile, watcher, scheduler, metrics, events, sink };
}

async function pendingGauge(metrics: AmsyncMetrics): Promise<number | undefined> {
  return parseExposition((await metrics.render()).body).value('amsync_pending_approvals');
}

const rootKey = () => emu.state().apikeys.find((k) => k.name === 'ops-root');

describe('the daemon holds a change that needs approval until the approvals file lists its hash', () => {
  it('applies the rest, reports the grant as pending, and applies it once its hash is listed', async () => {
    const { d, approvalsFile, watcher, scheduler, metrics, events, sink } = await start();

    // The first run applied everything but the superuser grant.
    expect(emu.state().sshUsers.map((u) => u.username)).toEqual(['deploy']);
    expect(rootKey()).toBeUndefined();
    expect(await pendingGauge(metrics)).toBe(1);
    expect(events).toHaveLength(1);
    const [pending] = events[0]!.added;
    expect(pending).toMatchObject({ kind: 'apikey', action: 'create', key: 'ops-root', id: null, rules: ['superuser'], source: `${join(dir, 'teams', 'ops.yaml')}:5:5` });
    const hash = pending!.hash;
    expect(hash).toMatch(/^[0-9a-f]{16}$/);

    // Still ready: the rest is applied, and /readyz lists what waits, by hash only.
    const readyz = await fetch(`${d.url}/readyz`);
    expect(readyz.status).toBe(200);
    expect(await readyz.text()).toBe(`ready: ok (1 change awaits approval: ${hash})\n`);
    expect(d.status().pendingApprovals).toEqual([hash]);
    // The watch covers the -f folder and the approvals file.
    expect(watcher.files).toEqual(expect.arrayContaining([join(dir, 'teams'), approvalsFile]));

    // Another run without an approval: still pending, not announced again, nothing written.
    const before = emu.requests().filter((r) => r.method !== 'GET').length;
    scheduler.fire();
    await d.idle();
    expect(emu.requests().filter((r) => r.method !== 'GET')).toHaveLength(before);
    expect(events).toHaveLength(1);

    // A hash for another change approves nothing.
    await writeFile(approvalsFile, '# approved in PR 41\n- 0123456789abcdef\n');
    watcher.change([approvalsFile]);
    await d.idle();
    expect(rootKey()).toBeUndefined();
    expect(await pendingGauge(metrics)).toBe(1);

    // The pipeline writes the hash: the file event triggers a run, which re-plans, finds the
    // same change with the same hash, and applies it.
    await writeFile(approvalsFile, `# approved in PR 42\n- 0123456789abcdef\n- ${hash.toUpperCase()}\n`);
    watcher.change([approvalsFile]);
    await d.idle();
    expect(rootKey()?.superuser).toBe(true);
    expect(await pendingGauge(metrics)).toBe(0);
    expect(d.status().pendingApprovals).toEqual([]);
    expect(await (await fetch(`${d.url}/readyz`)).text()).toBe('ready: ok\n');
    expect(sink.lines.some((l) => l.msg === 'change applied' && l.approval === hash && l.key === 'ops-root')).toBe(true);
    expect(events).toHaveLength(1);
    // Nothing the daemon said holds a secret.
    expect(sink.text()).not.toContain(PASSWORD);
    expect(sink.text()).not.toContain(TOKEN);
  });

  it('re-verifies against the change planned now: a hash approved for one grant does not approve a different one', async () => {
    const { d, approvalsFile, watcher, scheduler, metrics, events } = await start();
    const first = events[0]!.added[0]!.hash;
    await writeFile(approvalsFile, JSON.stringify([first]));
    watcher.change([approvalsFile]);
    await d.idle();
    expect(rootKey()?.superuser).toBe(true);

    // Someone removes superuser by hand: the correction re-grants it, a change of its own
    // (an update of that id), which the approval of the create does not cover.
    await fetch(`${emu.url}/api/3rdparty/apikeys/${rootKey()!.id}`, { method: 'PUT', headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' }, body: '{"superuser": false}' });
    scheduler.fire();
    await d.idle();
    expect(rootKey()?.superuser).toBe(false);
    expect(await pendingGauge(metrics)).toBe(1);
    expect(events).toHaveLength(2);
    expect(events[1]!.added[0]).toMatchObject({ action: 'update', key: 'ops-root', rules: ['superuser'] });
    const regrant = events[1]!.added[0]!.hash;
    expect(regrant).not.toBe(first);

    // An unusable approvals file approves nothing (logged), and the daemon goes on.
    await writeFile(approvalsFile, `[${regrant}, not-a-hash]`);
    watcher.change([approvalsFile]);
    await d.idle();
    expect(rootKey()?.superuser).toBe(false);

    await writeFile(approvalsFile, `approvals:\n  - ${regrant}\n`);
    watcher.change([approvalsFile]);
    await d.idle();
    expect(rootKey()?.superuser).toBe(true);
    expect(await pendingGauge(metrics)).toBe(0);
  });
});

describe('after a partial approval, what the daemon says to list approves the rest (issue 27)', () => {
  it('one of two grants approved before the first run: the event names what applies the other once listed', async () => {
    const twoRoots = 'apikeys:\n  - name: root-a\n    superuser: true\n  - name: root-b\n    superuser: true\n';
    const { d, approvalsFile, watcher, events } = await start(twoRoots, async (ctx, file) => {
      // The reviewed pull request approved root-a only.
      const planned = await ctx.sync((await ctx.loadDesired()).desired, { dryRun: true });
      const gate = planned.approval!.review.gates.find((g) => planned.plan.changes[g.index]!.key === 'root-a')!;
      await writeFile(file, `- ${gate.hash}\n`);
    });
    const superusers = () => emu.state().apikeys.filter((k) => k.superuser).map((k) => k.name).sort();
    expect(superusers()).toEqual(['root-a']);
    expect(events).toHaveLength(1);
    expect(events[0]!.pending.map((p) => p.key)).toEqual(['root-b']);

    // Before, the event offered only the set hash of both grants: listed, it matched no change
    // of the next plan (root-a is applied), and root-b stayed pending.
    const suggested = events[0]!.approve;
    expect(suggested).toEqual([events[0]!.pending[0]!.hash]);
    emu.clearRequests();
    await writeFile(approvalsFile, suggested.map((h) => `- ${h}\n`).join(''));
    watcher.change([approvalsFile]);
    await d.idle();
    expect(superusers()).toEqual(['root-a', 'root-b']);
    expect(emu.requests().filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.item?.name}`)).toEqual(['POST root-b']);
    expect(d.status().pendingApprovals).toEqual([]);
  });
});
