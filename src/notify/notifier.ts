import { randomUUID } from 'node:crypto';
import { parseRetryAfter, defaultUserAgent } from '../api/index.js';
import { Sleeper, systemTimers, type Timers } from '../time/index.js';
import type { NotificationMetrics, NotificationOutcome } from '../obs/index.js';
import { decideDelivery, type DeliveryPolicyOptions } from './delivery-policy.js';
import { isNotifyEventName, type NotifyEvent, type NotifyEventName } from './notify-event.js';
import type { ResolvedWebhook } from './resolve-webhooks.js';
import { signatureHeader } from './sign-body.js';
import { renderPayload } from './webhook-payload.js';
import { createWebhookTransport, type WebhookOutcome, type WebhookTransport } from './webhook-transport.js';

export interface NotifierOptions {
  readonly webhooks: readonly ResolvedWebhook[];
  /** Notifications waiting per webhook at most (the one being delivered not counted); past it the oldest is dropped. @default 1000 */
  readonly queueSize?: number;
  /** One delivery attempt, connection included. @default 10000 */
  readonly timeoutMs?: number;
  /** Attempts per notification, the first included. @default 5 */
  readonly maxAttempts?: number;
  /** First backoff step; it doubles per attempt, full jitter. @default 1000 */
  readonly baseDelayMs?: number;
  /** Longest single backoff, a Retry-After included. @default 60000 */
  readonly maxDelayMs?: number;
  /** The revision in every payload: revisionFromEnv(env). @default null */
  readonly revision?: string | null;
  /** The clock of `time`, backoff, timeouts and flush(). @default systemTimers */
  readonly timers?: Timers;
  /** In [0, 1), for the jitter. @default Math.random */
  readonly random?: () => number;
  /** @default got (createWebhookTransport) */
  readonly transport?: WebhookTransport;
  /** amsync_notifications_total; createMetrics() gives one. */
  readonly metrics?: NotificationMetrics;
  /** Told about every attempt's end, for logs. Never given a body, a key or a URL path. */
  readonly onDelivery?: (report: DeliveryReport) => void;
  /** X-Amsync-Delivery. @default crypto.randomUUID */
  readonly newDeliveryId?: () => string;
}

/** What happened to one notification for one webhook. */
export interface DeliveryReport {
  /** ResolvedWebhook.name: scheme, host and port. */
  readonly webhook: string;
  readonly event: NotifyEventName;
  readonly deliveryId: string;
  /** 1-based; 0 for one dropped before its first attempt. */
  readonly attempt: number;
  /** `retrying` is followed by another report for the same delivery; the others are final. */
  readonly outcome: NotificationOutcome | 'retrying';
  readonly status?: number;
  /** `http_500`, `ECONNREFUSED`, `timeout`, `queue_full`, `closed`... */
  readonly reason?: string;
  /** Before the next attempt (outcome `retrying`). */
  readonly delayMs?: number;
}

interface Delivery {
  readonly event: NotifyEventName;
  readonly deliveryId: string;
  readonly body: Buffer;
  readonly headers: Readonly<Record<string, string>>;
}

interface Lane {
  readonly webhook: ResolvedWebhook;
  readonly queue: Delivery[];
  /** A drain is scheduled or running. */
  running: boolean;
  /** Being delivered: in flight or waiting for its next attempt. */
  current: Delivery | undefined;
  inFlight: AbortController | undefined;
}

function positiveInt(name: string, value: number | undefined, fallback: number, min = 1): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < min) throw new TypeError(`Expected \`${name}\` to be a whole number from ${min} upwards, got ${String(value)}`);
  return v;
}

/**
 * Webhook notifications (README, "Teams and governance"): signed, bounded, never blocking, never secret.
 *
 * notify() only builds the body (names and counts, scrubbed, signed) and queues it: it returns
 * at once and never throws, whatever the receivers do. Each webhook has a queue and a worker of
 * its own, so a dead receiver delays only its own notifications; a queue holds `queueSize`
 * waiting at most, dropping the oldest (counted). Deliveries are retried with exponential
 * backoff and jitter on the injected clock, each attempt bounded by `timeoutMs`. Every final
 * outcome is counted in amsync_notifications_total{event, outcome}: sent, failed (the receiver
 * refused, or every attempt failed) or dropped (the queue was full, or the notifier closed
 * before it was delivered).
 *
 * On shutdown: `await flush(ms)` (deliver what is queued, within ms), then `await close()`.
 */
export class Notifier {
  readonly #lanes: Lane[];
  readonly #queueSize: number;
  readonly #timeoutMs: number;
  readonly #policy: DeliveryPolicyOptions;
  readonly #revision: string | null;
  readonly #timers: Timers;
  readonly #sleeper: Sleeper;
  readonly #random: () => number;
  readonly #transport: WebhookTransport;
  readonly #metrics: NotificationMetrics | undefined;
  readonly #onDelivery: ((report: DeliveryReport) => void) | undefined;
  readonly #newDeliveryId: () => string;
  readonly #idleWaiters = new Set<() => void>();
  #closed = false;
  #closing: Promise<void> | undefined;

  constructor(options: NotifierOptions) {
    this.#queueSize = positiveInt('queueSize', options.queueSize, 1000);
    this.#timeoutMs = positiveInt('timeoutMs', options.timeoutMs, 10_000);
    this.#policy = {
      maxAttempts: positiveInt('maxAttempts', options.maxAttempts, 5),
      baseDelayMs: positiveInt('baseDelayMs', options.baseDelayMs, 1000, 0),
      maxDelayMs: positiveInt('maxDelayMs', options.maxDelayMs, 60_000, 0),
    };
    this.#revision = options.revision ?? null;
    this.#timers = options.timers ?? systemTimers;
    this.#sleeper = new Sleeper(this.#timers);
    this.#random = options.random ?? Math.random;
    this.#transport = options.transport ?? createWebhookTransport({ userAgent: defaultUserAgent });
    this.#metrics = options.metrics;
    this.#onDelivery = options.onDelivery;
    this.#newDeliveryId = options.newDeliveryId ?? randomUUID;
    this.#lanes = options.webhooks.map((webhook) => ({ webhook, queue: [], running: false, current: undefined, inFlight: undefined }));
  }

  /** Notifications waiting or being delivered (in flight or between attempts), all webhooks together. */
  get pending(): number {
    return this.#lanes.reduce((n, lane) => n + lane.queue.length + (lane.current ? 1 : 0), 0);
  }

  /**
   * Queues `event` for every webhook that wants it, and returns at once: it never waits for a
   * receiver and never throws (a notification that cannot even be built is counted failed).
   */
  notify(event: NotifyEvent): void {
    try {
      if (!isNotifyEventName(event.event)) return;
      const lanes = this.#lanes.filter((lane) => lane.webhook.events === undefined || lane.webhook.events.has(event.event));
      if (lanes.length === 0) return;
      if (this.#closed) {
        for (const lane of lanes) this.#final(lane, { event: event.event, deliveryId: '' }, 0, 'dropped', { reason: 'closed' });
        return;
      }
      const ctx = { time: new Date(this.#timers.wallNow()).toISOString(), revision: this.#revision };
      const bodies = new Map<string, Buffer>();
      for (const lane of lanes) {
        const { format } = lane.webhook;
        let body = bodies.get(format);
        if (body === undefined) {
          body = Buffer.from(renderPayload(format, event, ctx), 'utf8');
          bodies.set(format, body);
        }
        this.#enqueue(lane, event.event, body);
      }
    } catch {
      this.#metrics?.recordNotification(String(event?.event), 'failed');
    }
  }

  /**
   * Resolves true once every queue is empty and nothing is in flight (delivered, or given up
   * on), or false when `timeoutMs` passed first (on the notifier's clock). Never rejects.
   */
  flush(timeoutMs: number): Promise<boolean> {
    if (this.#idle()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = (): void => {
        this.#timers.clearTimeout(timer);
        this.#idleWaiters.delete(waiter);
        resolve(true);
      };
      const timer = this.#timers.setTimeout(() => {
        this.#idleWaiters.delete(waiter);
        resolve(false);
      }, Math.max(0, timeoutMs));
      this.#idleWaiters.add(waiter);
    });
  }

  /**
   * Stops: later notify() calls are dropped, what is queued is dropped, an attempt in flight is
   * aborted and a backoff cut short (each counted `dropped`). Resolves when the workers stopped.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#closed = true;
    this.#sleeper.close();
    for (const lane of this.#lanes) {
      for (const delivery of lane.queue.splice(0)) this.#final(lane, delivery, 0, 'dropped', { reason: 'closed' });
      lane.inFlight?.abort();
    }
    if (!this.#idle()) await new Promise<void>((resolve) => this.#idleWaiters.add(resolve));
    this.#transport.close();
  }

  #enqueue(lane: Lane, event: NotifyEventName, body: Buffer): void {
    const deliveryId = this.#newDeliveryId();
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'x-amsync-event': event,
      'x-amsync-delivery': deliveryId,
      ...(lane.webhook.key !== undefined ? { 'x-amsync-signature': signatureHeader(body, lane.webhook.key) } : {}),
    };
    lane.queue.push({ event, deliveryId, body, headers });
    while (lane.queue.length > this.#queueSize) this.#final(lane, lane.queue.shift()!, 0, 'dropped', { reason: 'queue_full' });
    if (!lane.running) {
      lane.running = true;
      // After notify() returned: it does no more than queue.
      queueMicrotask(() => void this.#drain(lane));
    }
  }

  async #drain(lane: Lane): Promise<void> {
    try {
      for (let delivery = lane.queue.shift(); delivery !== undefined; delivery = lane.queue.shift()) {
        lane.current = delivery;
        await this.#deliver(lane, delivery);
      }
    } finally {
      lane.current = undefined;
      lane.running = false;
      if (this.#idle()) for (const waiter of [...this.#idleWaiters]) waiter();
    }
  }

  async #deliver(lane: Lane, delivery: Delivery): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      if (this.#closed) return this.#final(lane, delivery, attempt - 1, 'dropped', { reason: 'closed' });
      const outcome = await this.#attempt(lane, delivery);
      if (this.#closed) return this.#final(lane, delivery, attempt, 'dropped', { reason: 'closed' });
      const retryAfter = outcome.kind === 'response' ? parseRetryAfter(outcome.retryAfter, this.#timers.wallNow()) : undefined;
      const decision = decideDelivery(attempt, outcome, this.#random, this.#policy, retryAfter);
      const status = outcome.kind === 'response' ? { status: outcome.status } : {};
      if (decision.kind === 'sent') return this.#final(lane, delivery, attempt, 'sent', status);
      if (decision.kind === 'failed') return this.#final(lane, delivery, attempt, 'failed', { ...status, reason: decision.reason });
      this.#report({ webhook: lane.webhook.name, event: delivery.event, deliveryId: delivery.deliveryId, attempt, outcome: 'retrying', ...status, reason: decision.reason, delayMs: decision.delayMs });
      if (!(await this.#sleeper.sleep(decision.delayMs))) return this.#final(lane, delivery, attempt, 'dropped', { reason: 'closed' });
    }
  }

  /** One attempt, bounded by timeoutMs on the notifier's clock. */
  async #attempt(lane: Lane, delivery: Delivery): Promise<WebhookOutcome> {
    const controller = new AbortController();
    lane.inFlight = controller;
    let timedOut = false;
    const timer = this.#timers.setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.#timeoutMs);
    try {
      const outcome = await this.#transport.post({ url: lane.webhook.url, body: delivery.body, headers: delivery.headers, signal: controller.signal });
      return timedOut ? { kind: 'failure', code: 'timeout' } : outcome;
    } catch (error) {
      // A transport never throws; one that does fails this attempt, not the process.
      const code = (error as { code?: unknown } | null)?.code;
      return { kind: 'failure', code: timedOut ? 'timeout' : typeof code === 'string' ? code : 'transport_error' };
    } finally {
      this.#timers.clearTimeout(timer);
      lane.inFlight = undefined;
    }
  }

  #final(lane: Lane, delivery: Pick<Delivery, 'event' | 'deliveryId'>, attempt: number, outcome: NotificationOutcome, extra: { status?: number; reason?: string }): void {
    // No longer pending from the moment its outcome is known (a listener may read `pending`).
    if (lane.current === delivery) lane.current = undefined;
    this.#metrics?.recordNotification(delivery.event, outcome);
    this.#report({ webhook: lane.webhook.name, event: delivery.event, deliveryId: delivery.deliveryId, attempt, outcome, ...extra });
  }

  #report(report: DeliveryReport): void {
    try {
      this.#onDelivery?.(report);
    } catch {
      // A listener's mistake must not stop deliveries.
    }
  }

  #idle(): boolean {
    return this.#lanes.every((lane) => !lane.running && lane.queue.length === 0);
  }
}
