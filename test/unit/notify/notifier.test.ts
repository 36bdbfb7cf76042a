import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { Notifier, resolveWebhooks, type DeliveryReport, type NotifierOptions, type NotifyChange, type NotifyEvent, type ResolvedWebhook } from '../../../src/notify/index.js';
import { createMetrics, type NotificationMetrics, type NotificationOutcome } from '../../../src/obs/metrics.js';
import { registerSecret } from '../../../src/secrets/known-secrets.js';
import type { WebhookSetting } from '../../../src/settings/settings.js';
import { VirtualTime as FakeTimers } from '../../helpers/virtual-time.js';
import { parseExposition } from '../../helpers/daemon-prom-parse.js';
import { forms } from '../../helpers/encodings.js';
import { refusingUrl, WebhookReceiver, type Answer } from '../../helpers/webhook-receiver.js';

const hookKey = 'whk-test-key-Ω-"\\';
const env = { AMSYNC_TEST_HOOK_KEY: hookKey };

/** The notifier's reports, awaited by what they say (no time involved). */
class Reports {
  readonly list: DeliveryReport[] = [];
  readonly #waiters: { match: (r: DeliveryReport) => boolean; resolve: (r: DeliveryReport) => void }[] = [];

  readonly push = (report: DeliveryReport): void => {
    this.list.push(report);
    for (const waiter of [...this.#waiters]) {
      if (!waiter.match(report)) continue;
      this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
      waiter.resolve(report);
    }
  };

  /** The first report (already seen or still to come) that matches. */
  next(match: (r: DeliveryReport) => boolean): Promise<DeliveryReport> {
    const seen = this.list.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.#waiters.push({ match, resolve }));
  }

  final(count: number): Promise<void> {
    let seen = this.list.filter((r) => r.outcome !== 'retrying').length;
    if (seen >= count) return Promise.resolve();
    return new Promise((resolve) => {
      this.#waiters.push({
        match: (r) => r.outcome !== 'retrying' && (seen += 1) >= count,
        resolve: () => resolve(),
      });
    });
  }
}

/** Counts like amsync_notifications_total, for assertions. */
class CountingMetrics implements NotificationMetrics {
  readonly counts = new Map<string, number>();
  recordNotification(event: string, outcome: NotificationOutcome): void {
    const key = `${event}/${outcome}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }
  get(event: string, outcome: NotificationOutcome): number {
    return this.counts.get(`${event}/${outcome}`) ?? 0;
  }
}

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
});

async function receiver(answer?: (index: number) => Answer): Promise<WebhookReceiver> {
  const r = await WebhookReceiver.start(answer);
  open.push(r);
  return r;
}

function webhooks(settings: WebhookSetting[]): ResolvedWebhook[] {
  return resolveWebhooks(settings, { env, readSecretFile: () => new Error('no files here'), allowInsecureHttp: false });
}

function notifier(options: Partial<NotifierOptions> & Pick<NotifierOptions, 'webhooks'>) {
  const time = new FakeTimers();
  const reports = new Reports();
  const metrics = new CountingMetrics();
  let ids = 0;
  const n = new Notifier({
    timers: time,
    random: () => 0.5,
    metrics,
    onDelivery: reports.push,
    revision: 'a94a8fe5ccb1',
    newDeliveryId: () => `00000000-0000-4000-8000-${String((ids += 1)).padStart(12, '0')}`,
    baseDelayMs: 1000,
    timeoutMs: 60_000,
    ...options,
  });
  open.push(n);
  return { n, time, reports, metrics };
}

const applied: NotifyEvent = {
  event: 'changes_applied',
  target: 'eu-1',
  summary: { create: 1, update: 1, delete: 0, failed: 0 },
  changes: [
    { kind: 'sshUser', action: 'create', key: 'deploy' },
    // A caller's change objects may carry more (field values): only kind, action and key go out.
    { kind: 'apikey', action: 'update', key: 'billing', fields: { token: { before: 'x', after: 'y' } } } as NotifyChange,
  ],
  message: '2 changes applied',
};

function hmac(body: Buffer): string {
  return `sha256=${createHmac('sha256', hookKey).update(body).digest('hex')}`;
}

describe('the JSON payload: signed, with event and delivery headers', () => {
  it('POSTs {event, time, target, summary, changes, omittedChanges, message, revision}, signed over the exact body', async () => {
    const r = await receiver();
    const { n, reports, metrics } = notifier({ webhooks: webhooks([{ url: r.url(), secretEnv: 'AMSYNC_TEST_HOOK_KEY' }]) });
    n.notify(applied);
    expect(await reports.next((x) => x.outcome === 'sent')).toMatchObject({ attempt: 1, status: 200, event: 'changes_applied', webhook: r.url().replace('/hook', '') });
    const [request] = r.requests;
    expect(request!.method).toBe('POST');
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers['x-amsync-event']).toBe('changes_applied');
    expect(request!.headers['x-amsync-delivery']).toBe('00000000-0000-4000-8000-000000000001');
    expect(request!.headers['x-amsync-signature']).toBe(hmac(request!.body));
    expect(request!.headers['user-agent']).toMatch(/^amsync\//);
    expect(JSON.parse(request!.body.toString('utf8'))).toEqual({
      event: 'changes_applied',
      time: '2025-01-01T00:00:00.000Z',
      target: 'eu-1',
      summary: { create: 1, update: 1, delete: 0, failed: 0 },
      changes: [
        { kind: 'sshUser', action: 'create', key: 'deploy' },
        { kind: 'apikey', action: 'update', key: 'billing' },
      ],
      omittedChanges: 0,
      message: '2 changes applied',
      revision: 'a94a8fe5ccb1',
    });
    expect(metrics.get('changes_applied', 'sent')).toBe(1);
  });

  it('a webhook without a key gets no signature header; a long plan lists 100 changes and counts the rest', async () => {
    const r = await receiver();
    const { n, reports } = notifier({ webhooks: webhooks([{ url: r.url() }]) });
    const changes = Array.from({ length: 250 }, (_, i) => ({ kind: 'sshUser' as const, action: 'delete' as const, key: `u${i}` }));
    n.notify({ event: 'drift_found', changes, summary: { delete: 250 } });
    await reports.next((x) => x.outcome === 'sent');
    const request = r.requests[0]!;
    expect(request.headers['x-amsync-signature']).toBeUndefined();
    const body = JSON.parse(request.body.toString()) as { changes: unknown[]; omittedChanges: number; message: string; target: null };
    expect(body.changes).toHaveLength(100);
    expect(body.omittedChanges).toBe(150);
    expect(body.target).toBeNull();
    expect(body.message).toBe('Drift found: 250 delete');
  });

  it('a webhook gets only the events it lists', async () => {
    const all = await receiver();
    const failures = await receiver();
    const { n, reports } = notifier({ webhooks: webhooks([{ url: all.url() }, { url: failures.url(), events: ['failure'] }]) });
    n.notify(applied);
    n.notify({ event: 'failure', message: 'the service answered 503 for 2 minutes' });
    await reports.final(3);
    expect(all.requests.map((q) => q.headers['x-amsync-event'])).toEqual(['changes_applied', 'failure']);
    expect(failures.requests.map((q) => q.headers['x-amsync-event'])).toEqual(['failure']);
  });
});

describe('the slack format: {text, blocks}, readable', () => {
  it('a headline in text; the message, the changes and the revision in blocks; names escaped for mrkdwn', async () => {
    const r = await receiver();
    const { n, reports } = notifier({ webhooks: webhooks([{ url: r.url(), format: 'slack' }]) });
    n.notify({ ...applied, changes: [...applied.changes!, { kind: 'sshUser', action: 'delete', key: 'a<b>&`c' }] });
    await reports.next((x) => x.outcome === 'sent');
    const body = JSON.parse(r.requests[0]!.body.toString()) as { text: string; blocks: { type: string; text?: { text: string }; elements?: { text: string }[] }[] };
    expect(Object.keys(body).sort()).toEqual(['blocks', 'text']);
    expect(body.text).toBe(':white_check_mark: amsync: Changes applied on eu-1 — 2 changes applied');
    expect(body.blocks.map((b) => b.type)).toEqual(['section', 'section', 'context']);
    expect(body.blocks[0]!.text!.text).toBe(':white_check_mark: *Changes applied* on `eu-1`\n2 changes applied');
    expect(body.blocks[1]!.text!.text).toBe("• create sshUser `deploy`\n• update apikey `billing`\n• delete sshUser `a&lt;b&gt;&amp;'c`");
    expect(body.blocks[2]!.elements![0]!.text).toBe('create 1 · update 1 · delete 0 · failed 0 · revision `a94a8fe5ccb1` · 2025-01-01T00:00:00.000Z');
  });
});

describe('failed deliveries are retried with backoff on the injected clock', () => {
  it('after a 500 the same delivery (same id, body and signature) is sent again after the backoff, and counted sent once', async () => {
    const r = await receiver((i) => (i === 0 ? 500 : 200));
    const { n, time, reports, metrics } = notifier({ webhooks: webhooks([{ url: r.url(), secretEnv: 'AMSYNC_TEST_HOOK_KEY' }]) });
    n.notify(applied);
    // Full jitter with random() = 0.5: half of the first step (1000 ms).
    expect(await reports.next((x) => x.outcome === 'retrying')).toMatchObject({ attempt: 1, status: 500, reason: 'http_500', delayMs: 500 });
    expect(r.requests).toHaveLength(1);
    expect(n.pending).toBe(1);
    expect(time.pendingDelays()).toEqual([500]);
    await time.advance(499);
    expect(r.requests).toHaveLength(1);
    await time.advance(1);
    expect(await reports.next((x) => x.outcome === 'sent')).toMatchObject({ attempt: 2, status: 200 });
    const [first, second] = r.requests;
    expect(second!.headers['x-amsync-delivery']).toBe(first!.headers['x-amsync-delivery']);
    expect(second!.body.equals(first!.body)).toBe(true);
    expect(second!.headers['x-amsync-signature']).toBe(hmac(second!.body));
    expect(metrics.get('changes_applied', 'sent')).toBe(1);
    expect(metrics.get('changes_applied', 'failed')).toBe(0);
  });

  it('the backoff doubles per attempt and honours Retry-After; after maxAttempts it is counted failed', async () => {
    const r = await receiver((i) => (i === 1 ? { status: 429, headers: { 'retry-after': '7' } } : 503));
    const { n, time, reports, metrics } = notifier({ webhooks: webhooks([{ url: r.url() }]), maxAttempts: 4, random: () => 0.999 });
    n.notify({ event: 'failure', message: 'x' });
    const delays: number[] = [];
    for (let attempt = 1; attempt < 4; attempt += 1) {
      const report = await reports.next((x) => x.outcome === 'retrying' && x.attempt === attempt);
      delays.push(report.delayMs!);
      await time.advance(report.delayMs!);
    }
    // 999, 7000 (Retry-After beats 1998), 3996.
    expect(delays).toEqual([999, 7000, 3996]);
    expect(await reports.next((x) => x.outcome === 'failed')).toMatchObject({ attempt: 4, status: 503, reason: 'http_503' });
    expect(r.requests).toHaveLength(4);
    expect(metrics.get('failure', 'failed')).toBe(1);
  });

  it('a 4xx or a redirect is not retried: the receiver refused this body', async () => {
    const r = await receiver((i) => (i === 0 ? 400 : { status: 302, headers: { location: 'http://127.0.0.1:1/elsewhere' } }));
    const { n, reports, metrics } = notifier({ webhooks: webhooks([{ url: r.url() }]) });
    n.notify({ event: 'failure' });
    n.notify({ event: 'failure' });
    await reports.final(2);
    expect(reports.list.map((x) => [x.outcome, x.reason])).toEqual([
      ['failed', 'http_400'],
      ['failed', 'http_302'],
    ]);
    expect(r.requests).toHaveLength(2);
    expect(metrics.get('failure', 'failed')).toBe(2);
  });
});

describe('a dead receiver never blocks notify() and is counted failed', () => {
  it('connection refused: notify() returns before any attempt; every attempt fails; counted failed', async () => {
    const { n, reports, metrics } = notifier({ webhooks: webhooks([{ url: await refusingUrl() }]), maxAttempts: 3, random: () => 0 });
    n.notify({ event: 'config_invalid', message: 'access.yaml:3:5 unknown key' });
    // Queued, nothing tried yet: notify() did no more than that.
    expect(reports.list).toEqual([]);
    expect(n.pending).toBe(1);
    expect(await reports.next((x) => x.outcome === 'failed')).toMatchObject({ attempt: 3, reason: 'ECONNREFUSED' });
    expect(reports.list.filter((x) => x.outcome === 'retrying')).toHaveLength(2);
    expect(metrics.get('config_invalid', 'failed')).toBe(1);
    expect(n.pending).toBe(0);
  });

  it('a receiver that never answers: the attempt times out on the injected clock; a healthy webhook beside it is not delayed', async () => {
    const dead = await receiver(() => 'hang');
    const healthy = await receiver();
    const { n, time, reports, metrics } = notifier({ webhooks: webhooks([{ url: dead.url() }, { url: healthy.url() }]), maxAttempts: 1, timeoutMs: 5000 });
    n.notify({ event: 'leadership_changed', message: 'this replica now holds lease amsync/amsync-leader' });
    // The healthy one is delivered while the dead one still hangs.
    expect(await reports.next((x) => x.outcome === 'sent')).toMatchObject({ webhook: healthy.url().replace('/hook', '') });
    await dead.received(1);
    expect(reports.list.filter((x) => x.webhook === dead.url().replace('/hook', ''))).toEqual([]);
    expect(time.pendingDelays()).toEqual([5000]);
    await time.advance(5000);
    expect(await reports.next((x) => x.outcome === 'failed')).toMatchObject({ webhook: dead.url().replace('/hook', ''), reason: 'timeout', attempt: 1 });
    expect(metrics.get('leadership_changed', 'failed')).toBe(1);
    expect(metrics.get('leadership_changed', 'sent')).toBe(1);
  });

  it('notify() with an unknown event or a broken object returns quietly', () => {
    const { n } = notifier({ webhooks: webhooks([{ url: 'http://127.0.0.1:9/hook' }]) });
    expect(() => n.notify({ event: 'nope' } as unknown as NotifyEvent)).not.toThrow();
    expect(() => n.notify(null as unknown as NotifyEvent)).not.toThrow();
    expect(() => n.notify({ event: 'failure', changes: 5 } as unknown as NotifyEvent)).not.toThrow();
  });
});

describe('the queue is bounded: past queueSize the oldest is dropped and counted', () => {
  it('ten notifications at once for a webhook that hangs, queueSize 3: the 7 oldest dropped, 3 kept; close() drops the rest', async () => {
    const dead = await receiver(() => 'hang');
    const { n, reports, metrics } = notifier({ webhooks: webhooks([{ url: dead.url() }]), queueSize: 3 });
    for (let i = 1; i <= 10; i += 1) n.notify({ event: 'drift_found', message: `run ${i}` });
    expect(reports.list.map((x) => [x.outcome, x.reason])).toEqual(Array.from({ length: 7 }, () => ['dropped', 'queue_full']));
    expect(n.pending).toBe(3);
    expect(metrics.get('drift_found', 'dropped')).toBe(7);
    // The oldest kept one goes first.
    await dead.received(1);
    expect(JSON.parse(dead.requests[0]!.body.toString())).toMatchObject({ message: 'run 8' });
    await n.close();
    expect(metrics.get('drift_found', 'dropped')).toBe(10);
    expect(metrics.get('drift_found', 'sent') + metrics.get('drift_found', 'failed')).toBe(0);
    // After close: dropped at once, never thrown.
    n.notify({ event: 'drift_found' });
    expect(metrics.get('drift_found', 'dropped')).toBe(11);
  });
});

describe('flush() and close() for shutdown', () => {
  it('flush resolves true once everything is delivered, false when its time runs out first', async () => {
    const r = await receiver();
    const { n } = notifier({ webhooks: webhooks([{ url: r.url() }]) });
    n.notify({ event: 'changes_applied' });
    n.notify({ event: 'changes_applied' });
    expect(await n.flush(1000)).toBe(true);
    expect(r.requests).toHaveLength(2);
    expect(await n.flush(1000)).toBe(true);

    const dead = await receiver(() => 'hang');
    const stuck = notifier({ webhooks: webhooks([{ url: dead.url() }]) });
    stuck.n.notify({ event: 'failure' });
    const flushed = stuck.n.flush(2000);
    await dead.received(1);
    await stuck.time.advance(2000);
    expect(await flushed).toBe(false);
    await stuck.n.close();
    expect(stuck.metrics.get('failure', 'dropped')).toBe(1);
  });
});

describe('no canary secret in any payload', () => {
  const canaries = ['notify-"canary"-pw', 'notify-back\\slash-tok', 'notify-ünïcode-€-키'];
  for (const canary of canaries) registerSecret(canary);

  it.each([['json'], ['slack']] as const)('%s: a message, a key and a target quoting secrets are sent without them, still signed', async (format) => {
    const r = await receiver();
    const { n, reports } = notifier({ webhooks: webhooks([{ url: r.url(), format, secretEnv: 'AMSYNC_TEST_HOOK_KEY' }]) });
    n.notify({
      event: 'failure',
      target: `t-${canaries[1]!}`,
      message: `the service said {"error": "bad password ${canaries[0]!}"} for ${encodeURIComponent(canaries[2]!)}`,
      changes: [{ kind: 'sshUser', action: 'update', key: canaries[2]! }],
      summary: { [canaries[0]!]: 1 },
    });
    await reports.next((x) => x.outcome === 'sent');
    const request = r.requests[0]!;
    const text = request.body.toString('utf8');
    for (const form of forms([...canaries, hookKey])) expect(text).not.toContain(form);
    for (const value of Object.values(request.headers).flat()) for (const form of forms([...canaries, hookKey])) expect(String(value)).not.toContain(form);
    expect(text).toContain('[redacted]');
    expect(() => JSON.parse(text)).not.toThrow();
    expect(request.headers['x-amsync-signature']).toBe(hmac(request.body));
  });
});

describe('amsync_notifications_total fits src/obs/metrics.ts', () => {
  it('every event × outcome reads 0 from the first scrape; deliveries count there', async () => {
    const metrics = createMetrics({ version: '1.2.3' });
    const before = parseExposition((await metrics.render()).body);
    expect(before.families.get('amsync_notifications_total')?.type).toBe('counter');
    for (const event of ['drift_found', 'changes_applied', 'failure', 'approvals_pending', 'leadership_changed', 'config_invalid']) {
      for (const outcome of ['sent', 'failed', 'dropped']) expect(before.value('amsync_notifications_total', { event, outcome })).toBe(0);
    }
    const r = await receiver();
    const { n } = notifier({ webhooks: webhooks([{ url: r.url() }]), metrics });
    n.notify({ event: 'approvals_pending', message: 'superuser for billing needs --approve 3f2a…' });
    expect(await n.flush(1000)).toBe(true);
    metrics.recordNotification('not-an-event', 'sent');
    const after = parseExposition((await metrics.render()).body);
    expect(after.value('amsync_notifications_total', { event: 'approvals_pending', outcome: 'sent' })).toBe(1);
    expect(after.value('amsync_notifications_total', { event: 'other', outcome: 'sent' })).toBe(1);
  });
});
