import { scrubbedJson } from '../secrets/index.js';
import type { WebhookFormat } from '../settings/index.js';
import { escapeControls } from '../text/index.js';
import type { NotifyChange, NotifyEvent, NotifyEventName } from './notify-event.js';

/** What the notifier adds to an event. */
export interface PayloadContext {
  /** ISO-8601, when notify() was called. */
  readonly time: string;
  readonly revision: string | null;
}

/** Changes listed in one payload at most; `omittedChanges` counts the rest (a 100k-item plan is not a webhook body). */
export const maxPayloadChanges = 100;
/** Changes a Slack message lists: a person reads it. */
const maxSlackChanges = 10;
const maxMessageLength = 2000;

/** amsync's own payload, as sent with `format: json`. */
export interface JsonPayload {
  readonly event: NotifyEventName;
  readonly time: string;
  readonly target: string | null;
  readonly summary: Readonly<Record<string, number>> | null;
  readonly changes: readonly NotifyChange[];
  readonly omittedChanges: number;
  readonly message: string;
  readonly revision: string | null;
}

/**
 * The body of one notification for a webhook's format, as the exact text sent (and signed).
 * Built only from names, counts and the caller's message, field by field (a caller's change
 * objects may hold before/after values: only kind, action and key are copied); then
 * serialised and passed through `scrub`, so no known secret can be in it whatever a message
 * quoted. Pure but for the process-wide set of known secrets.
 */
export function renderPayload(format: WebhookFormat, event: NotifyEvent, ctx: PayloadContext): string {
  const payload = jsonPayload(event, ctx);
  return scrubbedJson(format === 'slack' ? slackPayload(payload) : payload);
}

export function jsonPayload(event: NotifyEvent, ctx: PayloadContext): JsonPayload {
  const all = event.changes ?? [];
  return {
    event: event.event,
    time: ctx.time,
    target: event.target ?? null,
    summary: counts(event.summary),
    changes: all.slice(0, maxPayloadChanges).map((c) => ({ kind: c.kind, action: c.action, key: String(c.key) })),
    omittedChanges: Math.max(0, all.length - maxPayloadChanges),
    message: (event.message ?? defaultMessage(event)).slice(0, maxMessageLength),
    revision: ctx.revision,
  };
}

function counts(summary: NotifyEvent['summary']): Readonly<Record<string, number>> | null {
  if (summary === undefined || summary === null) return null;
  const out: Record<string, number> = {};
  for (const [name, value] of Object.entries(summary)) if (typeof value === 'number' && Number.isFinite(value)) out[name] = value;
  return out;
}

const titles: Readonly<Record<NotifyEventName, string>> = {
  drift_found: 'Drift found',
  changes_applied: 'Changes applied',
  failure: 'Sync failed',
  approvals_pending: 'Approvals pending',
  leadership_changed: 'Leadership changed',
  config_invalid: 'Configuration invalid',
  suspension_changed: 'Suspended or resumed',
  access_expired: 'Access expired',
  access_expiring: 'Access expiring',
  credential_rotated: 'Credential rotated',
};

const icons: Readonly<Record<NotifyEventName, string>> = {
  drift_found: ':mag:',
  changes_applied: ':white_check_mark:',
  failure: ':x:',
  approvals_pending: ':hourglass:',
  leadership_changed: ':crown:',
  config_invalid: ':warning:',
  suspension_changed: ':pause_button:',
  access_expired: ':lock:',
  access_expiring: ':alarm_clock:',
  credential_rotated: ':key:',
};

function defaultMessage(event: NotifyEvent): string {
  const summary = counts(event.summary);
  if (summary === null) return titles[event.event];
  const parts = Object.entries(summary).map(([name, n]) => `${n} ${name}`);
  return parts.length === 0 ? titles[event.event] : `${titles[event.event]}: ${parts.join(', ')}`;
}

/** Text for Slack's mrkdwn: its three control characters escaped, terminal controls made visible. */
function slackText(text: string): string {
  return escapeControls(text, { keepNewlines: true }).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A name shown in a code span: a backtick in it would end the span. */
function slackCode(text: string): string {
  return `\`${slackText(text).replace(/`/g, "'")}\``;
}

/** `{text, blocks}` for a Slack incoming webhook: a headline for notifications, details in blocks. */
function slackPayload(payload: JsonPayload): { text: string; blocks: unknown[] } {
  const title = titles[payload.event];
  const where = payload.target === null ? '' : ` on ${slackCode(payload.target)}`;
  const text = `${icons[payload.event]} amsync: ${title}${payload.target === null ? '' : ` on ${slackText(payload.target)}`} — ${slackText(payload.message)}`;
  const blocks: unknown[] = [{ type: 'section', text: { type: 'mrkdwn', text: `${icons[payload.event]} *${title}*${where}\n${slackText(payload.message)}`.slice(0, 3000) } }];
  const total = payload.changes.length + payload.omittedChanges;
  if (total > 0) {
    const shown = payload.changes.slice(0, maxSlackChanges).map((c) => `• ${c.action} ${c.kind} ${slackCode(c.key)}`);
    if (total > shown.length) shown.push(`…and ${total - shown.length} more`);
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: shown.join('\n').slice(0, 3000) } });
  }
  const context = [
    ...(payload.summary === null ? [] : [Object.entries(payload.summary).map(([name, n]) => `${slackText(name)} ${n}`).join(' · ')]),
    ...(payload.revision === null ? [] : [`revision ${slackCode(payload.revision.slice(0, 12))}`]),
    payload.time,
  ].filter((part) => part !== '');
  blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: context.join(' · ') }] });
  return { text, blocks };
}
