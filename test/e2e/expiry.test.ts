import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createServiceContext, type ServiceContext } from '../../src/cli/service-context.js';
import { type RunningDaemon } from '../../src/daemon/index.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { createMetrics, type AmsyncMetrics } from '../../src/obs/metrics.js';
import { FakeScheduler, logSink } from '../helpers/daemon-fakes.js';
import { parseExposition } from '../helpers/daemon-prom-parse.js';
import { runInProcess } from '../helpers/in-process.js';
import { VirtualTime } from '../helpers/virtual-time.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { startInProcessDaemon } from '../helpers/in-process-daemon.js';

/**
 * Issue 30 item 1, "done when": access that expires. The daemon runs in process against the
 * emulator on a virtual clock (2025-01-01T00:00:00Z at its start) whose schedule never fires:
 * only its expiry timer can start the run that deletes. The CLI parts (plan, sync, validate)
 * run in process on a moved `Date`. What amsync reports is compared with the emulator's
 * request log, the audit log and the webhooks received.
 */

const TOKEN = 'CANARY-bearer-expiry-5c0e';
const PASSWORD = 'CANARY-password-expiry-9a31';
const START = Date.UTC(2025, 0, 1);

let dir: string;
let emu: RunningEmulator;
let receiver: WebhookReceiver;
let context: ServiceContext | undefined;
let daemon: RunningDaemon | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-expiry-'));
  emu = await startEmulator({ tokens: [TOKEN] });
  receiver = await WebhookReceiver.start();
  await writeFile(join(dir, 'settings.yaml'), `auditLog: ${join(dir, 'audit.jsonl')}\nstateFile: ${join(dir, 'state.json')}\nnotify:\n  maxAttempts: 1\n  webhooks:\n    - url: ${receiver.url()}\n`);
});

afterEach(async () => {
  vi.useRealTimers();
  await daemon?.stop();
  context?.close();
  await emu.close();
  await receiver.close();
  daemon = undefined;
  context = undefined;
  await rm(dir, { recursive: true, force: true });
});

const env = { AMSYNC_TOKEN: TOKEN, CONTRACTOR_PASSWORD: PASSWORD, AMSYNC_INITIAL_RATE: '1000' };
const contractor = (expires: string) => `sshUsers:\n  - username: deploy\n    password: { env: CONTRACTOR_PASSWORD }\n  - username: contractor\n    password: { env: CONTRACTOR_PASSWORD }\n    expires: ${expires}\n`;
const writes = () => emu.requests().filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path}`);
const usernames = () => emu.state().sshUsers.map((u) => u.username).sort();
const gauge = async (metrics: AmsyncMetrics, name: string) => parseExposition((await metrics.render()).body).value(name);
const auditLines = async () => (await readFile(join(dir, 'audit.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
const hooks = () => receiver.requests.map((r) => JSON.parse(r.body.toString('utf8')) as { event: string; changes?: { key: string; action: string }[] });
const cli = (args: string[]) => runInProcess([...args, '--url', emu.url, '--settings', join(dir, 'settings.yaml')], { cwd: dir, env });

/** The daemon as serve-one-service.ts wires it (sync on the daemon's clock, audit trigger, webhooks), on a virtual clock. */
async function startDaemonAt(file: string) {
  const sink = logSink('debug'); // 'sync started' is a debug line
  context = await createServiceContext({ file: [file], url: emu.url, settings: join(dir, 'settings.yaml') }, { env, stderr: process.stderr }, { logger: sink.logger });
  const ctx = context;
  const time = new VirtualTime();
  const scheduler = new FakeScheduler();
  const metrics = createMetrics({ version: 'test' });
  // The schedule is a year away (and the fake cron never fires by itself): only an expiry starts a run.
  daemon = await startInProcessDaemon(ctx, { notify: (event) => ctx.notify(event), logger: sink.logger, metrics, options: { file, watch: [file], socket: join(dir, 'ctl.sock') }, timers: time, scheduler: scheduler.factory });
  return { d: daemon, time, metrics, sink, scheduler };
}

describe('expiry: the running daemon', () => {
  it('deletes a user at its expiry (the expiry timer, not the schedule): verified, audited, told, never re-created', async () => {
    const file = join(dir, 'access.yaml');
    // Five seconds after the daemon's virtual start.
    await writeFile(file, contractor('2025-01-01T00:00:05Z'));
    const { d, time, metrics, sink } = await startDaemonAt(file);
    expect(usernames()).toEqual(['contractor', 'deploy']);
    const id = emu.state().sshUsers.find((u) => u.username === 'contractor')!.id;
    expect(await gauge(metrics, 'amsync_next_expiry_timestamp_seconds')).toBe(START / 1000 + 5);
    expect(await gauge(metrics, 'amsync_items_expiring')).toBe(1);
    // Within 24 h of its expiry: access_expiring, once.
    await receiver.received(2);
    expect(hooks().map((h) => h.event).sort()).toEqual(['access_expiring', 'changes_applied']);
    expect(hooks().find((h) => h.event === 'access_expiring')!.changes).toEqual([{ kind: 'sshUser', action: 'delete', key: 'contractor' }]);

    emu.clearRequests();
    await time.advance(4_000);
    await d.idle();
    expect(emu.requests()).toEqual([]);
    expect(usernames()).toEqual(['contractor', 'deploy']);

    // The expiry comes: a run starts at once, on the expiry timer.
    await time.advance(1_000);
    await d.idle();
    expect(time.wallNow() - (START + 5_000)).toBeLessThan(2_000);
    expect(usernames()).toEqual(['deploy']);
    expect(sink.lines.some((l) => l.msg === 'sync started' && Array.isArray(l.reasons) && (l.reasons as string[]).includes('expiry'))).toBe(true);
    const byId = emu.requests().filter((r) => r.path === `/api/sshusers/${id}`).map((r) => r.method);
    // A verified delete: read by id, deleted (then read again to see it gone).
    expect(byId.slice(0, 2)).toEqual(['GET', 'DELETE']);
    expect(writes()).toEqual([`DELETE /api/sshusers/${id}`]);

    const audited = (await auditLines()).filter((l) => l.key === 'contractor' && l.action === 'delete');
    expect(audited.map((l) => [l.phase, l.status, l.reason])).toEqual([
      ['attempt', null, 'expired'],
      ['result', 'applied', 'expired'],
    ]);
    await receiver.received(4);
    const expired = hooks().filter((h) => h.event === 'access_expired');
    expect(expired).toHaveLength(1);
    expect(expired[0]!.changes).toEqual([{ kind: 'sshUser', action: 'delete', key: 'contractor' }]);
    expect(await gauge(metrics, 'amsync_next_expiry_timestamp_seconds')).toBe(0);
    expect(await gauge(metrics, 'amsync_items_expiring')).toBe(0);

    // The file still declares it: later runs (an edit, the schedule, an hour on) do not re-create it.
    emu.clearRequests();
    d.trigger('schedule');
    await d.idle();
    await time.advance(3_600_000);
    d.trigger('file');
    await d.idle();
    expect(writes()).toEqual([]);
    expect(usernames()).toEqual(['deploy']);
    expect(hooks().filter((h) => h.event === 'access_expired')).toHaveLength(1);
    expect(sink.text()).not.toContain(PASSWORD);
    expect(sink.text()).not.toContain(TOKEN);
  });
});

describe('expiry: plan, sync and validate on a moved clock', () => {
  it('plan shows "expires in"; after the expiry, sync deletes it with the reason expired and counts it apart', async () => {
    const t0 = Math.floor(Date.now() / 1000) * 1000;
    vi.useFakeTimers({ toFake: ['Date'], now: t0 });
    const expires = new Date(t0 + 2 * 86_400_000 + 4 * 3_600_000 + 1_800_000).toISOString().replace('.000Z', 'Z');
    const file = join(dir, 'access.yaml');
    await writeFile(file, contractor(expires));

    const planned = await cli(['plan', '-f', file]);
    expect(planned.code).toBe(0);
    expect(planned.stdout).toContain(`Expiring (expires / ttl):\n  sshUser "contractor" (new): expires in 2d 4h (${expires})\n`);
    expect((await cli(['sync', '-f', file, '--auto-approve'])).code).toBe(0);
    const id = emu.state().sshUsers.find((u) => u.username === 'contractor')!.id;
    expect((await cli(['plan', '-f', file])).stdout).toContain(`  sshUser "contractor" (id ${id}): expires in 2d 4h (${expires})\n`);

    // Past the expiry.
    vi.setSystemTime(t0 + 3 * 86_400_000);
    emu.clearRequests();
    const synced = await cli(['sync', '-f', file, '--auto-approve', '--json']);
    expect(synced.code).toBe(0);
    const doc = JSON.parse(synced.stdout) as { summary: Record<string, number>; changes: { action: string; key: string; reason?: string }[] };
    expect(doc.summary).toMatchObject({ create: 0, update: 0, delete: 1, expired: 1 });
    expect(doc.changes).toEqual([expect.objectContaining({ action: 'delete', key: 'contractor', reason: 'expired' })]);
    expect(writes()).toEqual([`DELETE /api/sshusers/${id}`]);
    const audited = (await auditLines()).filter((l) => l.key === 'contractor' && l.action === 'delete');
    expect(audited.map((l) => l.reason)).toEqual(['expired', 'expired']);

    // Declared but expired: never created again, and the text says why.
    emu.clearRequests();
    const again = await cli(['sync', '-f', file, '--auto-approve']);
    expect(again.code).toBe(0);
    expect(writes()).toEqual([]);
    expect(again.stdout).toContain(`SSH user "contractor" expired at ${expires}: not created`);
  });

  it('the text summary counts expired deletes apart', async () => {
    const t0 = Math.floor(Date.now() / 1000) * 1000;
    vi.useFakeTimers({ toFake: ['Date'], now: t0 });
    const file = join(dir, 'access.yaml');
    await writeFile(file, contractor(new Date(t0 + 60_000).toISOString()));
    expect((await cli(['sync', '-f', file, '--auto-approve'])).code).toBe(0);
    vi.setSystemTime(t0 + 120_000);
    const planned = await cli(['plan', '-f', file]);
    expect(planned.stdout).toContain('Plan: 0 to create, 0 to update, 1 to delete (1 expired), 1 unchanged, 0 unmanaged.');
  });

  it('ttl: on a key amsync created counts from the create time the state file records', async () => {
    const t0 = Math.floor(Date.now() / 1000) * 1000;
    vi.useFakeTimers({ toFake: ['Date'], now: t0 });
    const file = join(dir, 'access.yaml');
    await writeFile(file, 'apikeys:\n  - name: ci-temp\n    ttl: 1h\n');
    expect((await cli(['sync', '-f', file, '--auto-approve'])).code).toBe(0);
    const key = emu.state().apikeys.find((k) => k.name === 'ci-temp')!;
    const state = JSON.parse(await readFile(join(dir, 'state.json'), 'utf8')) as { services: Record<string, { createdAt?: Record<string, string> }> };
    expect(Object.values(state.services)[0]!.createdAt).toEqual({ [`apikey:${key.id}`]: new Date(t0).toISOString() });

    // Half an hour on: half an hour left (from the recorded create, not from now).
    vi.setSystemTime(t0 + 1_800_000);
    expect((await cli(['plan', '-f', file])).stdout).toContain(`  apikey "ci-temp" (id ${key.id}): expires in 30m (${new Date(t0 + 3_600_000).toISOString().replace('.000Z', 'Z')})\n`);

    vi.setSystemTime(t0 + 3_600_000 + 1_000);
    emu.clearRequests();
    const synced = await cli(['sync', '-f', file, '--auto-approve', '--json']);
    expect(synced.code).toBe(0);
    expect((JSON.parse(synced.stdout) as { summary: Record<string, number> }).summary).toMatchObject({ delete: 1, expired: 1 });
    expect(writes()).toEqual([`DELETE /api/3rdparty/apikeys/${key.id}`]);
    expect(emu.state().apikeys).toEqual([]);
  });

  it('a saved plan with an expired delete: plan --out, then apply, deletes it; the plan file says it expired', async () => {
    const t0 = Math.floor(Date.now() / 1000) * 1000;
    vi.useFakeTimers({ toFake: ['Date'], now: t0 });
    const expires = new Date(t0 + 60_000).toISOString().replace('.000Z', 'Z');
    const file = join(dir, 'access.yaml');
    await writeFile(file, contractor(expires));
    expect((await cli(['sync', '-f', file, '--auto-approve'])).code).toBe(0);
    const id = emu.state().sshUsers.find((u) => u.username === 'contractor')!.id;

    // Before the expiry, the saved plan carries it (and nothing to do).
    const early = join(dir, 'early.json');
    expect((await cli(['plan', '-f', file, '--out', early])).code).toBe(0);
    const earlyDoc = JSON.parse(await readFile(early, 'utf8')) as { plan: { expiries?: unknown[] } };
    expect(earlyDoc.plan.expiries).toEqual([{ kind: 'sshUser', key: 'contractor', id, expiresAt: expires, remainingSeconds: 60 }]);

    vi.setSystemTime(t0 + 120_000);
    // Applied after the expiry, that plan says nothing of the delete now due: refused.
    emu.clearRequests();
    const stale = await cli(['apply', early, '-f', file]);
    expect(stale.code).toBe(3);
    expect(stale.stderr).toContain(`${early}: sshUser "contractor" at ${expires} expired since the plan was made; nothing was written; plan again`);
    expect(writes()).toEqual([]);

    const saved = join(dir, 'plan.json');
    expect((await cli(['plan', '-f', file, '--out', saved])).code).toBe(0);
    const doc = JSON.parse(await readFile(saved, 'utf8')) as { plan: { summary: Record<string, number>; changes: { action: string; key: string; reason?: string }[]; expiries?: unknown[] } };
    expect(doc.plan.summary).toEqual({ create: 0, update: 0, delete: 1, unchanged: 1, unmanaged: 0, expired: 1 });
    expect(doc.plan.changes).toEqual([expect.objectContaining({ action: 'delete', key: 'contractor', reason: 'expired' })]);
    expect(doc.plan.expiries).toBeUndefined();

    emu.clearRequests();
    const applied = await cli(['apply', saved, '-f', file]);
    expect(applied.stderr).not.toContain('error');
    expect(applied.code).toBe(0);
    expect(writes()).toEqual([`DELETE /api/sshusers/${id}`]);
    expect(usernames()).toEqual(['deploy']);
    const audited = (await auditLines()).filter((l) => l.key === 'contractor' && l.action === 'delete');
    expect(audited.map((l) => [l.trigger, l.reason])).toEqual([
      ['saved-plan', 'expired'],
      ['saved-plan', 'expired'],
    ]);
  });

  it('validate warns about an expiry already past, and exits 0', async () => {
    const file = join(dir, 'access.yaml');
    await writeFile(file, contractor('2020-01-01T00:00:00Z'));
    const result = await runInProcess(['validate', '-f', file], { cwd: dir, env: {} });
    expect(result.code).toBe(0);
    expect(result.stderr + result.stdout).toMatch(/access\.yaml:4:5: warning: SSH user "contractor" expired at 2020-01-01T00:00:00Z/);
    expect(emu.requests()).toEqual([]);
  });
});
