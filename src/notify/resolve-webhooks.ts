import { isAbsolute, resolve } from 'node:path';
import { isLoopbackHost } from '../api/index.js';
import { InvalidInputError } from '../errors.js';
import type { Diagnostic, SecretValue } from '../model/index.js';
import { registerSecret, resolveSecretRef } from '../secrets/index.js';
import type { WebhookFormat, WebhookSetting } from '../settings/index.js';
import type { NotifyEventName } from './notify-event.js';

/** A webhook ready to be posted to: its URL checked, its key read. */
export interface ResolvedWebhook {
  readonly url: URL;
  /**
   * How logs and reports name it: scheme, host and port only. The rest of a webhook URL is
   * often itself a credential (Slack's, Teams' and Discord's are), so it is never shown and is
   * registered as a known secret.
   */
  readonly name: string;
  readonly format: WebhookFormat;
  /** undefined: every event. */
  readonly events?: ReadonlySet<NotifyEventName>;
  /** Signs the body (X-Amsync-Signature); undefined: unsigned (a Slack webhook checks none). */
  readonly key?: SecretValue;
}

export interface WebhookContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  /**
   * Reads a key file (absolute path); an Error when it cannot. Never throws. The desired-state
   * loader's reader fits (regular files only, bounded).
   */
  readonly readSecretFile: (absPath: string) => string | Error;
  /** Relative secretFile paths start here. @default the working directory */
  readonly baseDir?: string;
  /** http.allowInsecureHttp: plain http to a host that is not loopback. */
  readonly allowInsecureHttp: boolean;
}

/**
 * `notify.webhooks` -> webhooks to post to, each key read once (from its variable or file) as
 * a known secret. Every problem of every webhook is found before any is used: an
 * InvalidInputError (exit 65, `notify_invalid`) lists them, naming variables and files, never
 * a key.
 */
export function resolveWebhooks(webhooks: readonly WebhookSetting[], ctx: WebhookContext): ResolvedWebhook[] {
  const problems: Diagnostic[] = [];
  const resolved: ResolvedWebhook[] = [];
  webhooks.forEach((webhook, index) => {
    const path = `notify.webhooks[${index}]`;
    const problem = (field: string, code: string, message: string) => problems.push({ severity: 'error', code, path: `${path}.${field}`, message: `${path}.${field}: ${message}` });
    let url: URL | undefined;
    try {
      url = new URL(webhook.url);
    } catch {
      problem('url', 'invalid_url', 'expected an absolute http:// or https:// URL');
    }
    if (url !== undefined) {
      // The whole URL, and its path when it is long enough to be a token, are scrubbed from all output.
      registerSecret(url.href);
      if (url.pathname.length + url.search.length >= 16) registerSecret(`${url.pathname}${url.search}`);
      if (url.protocol !== 'https:' && url.protocol !== 'http:') problem('url', 'invalid_url', `expected https (or http to loopback), got ${url.protocol}`);
      else if (url.username !== '' || url.password !== '') problem('url', 'invalid_url', 'a webhook URL must not carry a user name or password');
      else if (url.protocol === 'http:' && !ctx.allowInsecureHttp && !isLoopbackHost(url.hostname)) {
        problem('url', 'insecure_http', `refusing plain http to ${url.host}: notifications and the URL itself would cross the network unencrypted; use https, or set http.allowInsecureHttp`);
      }
    }
    let key: SecretValue | undefined;
    if (webhook.secretEnv !== undefined || webhook.secretFile !== undefined) {
      const ref =
        webhook.secretEnv !== undefined
          ? ({ kind: 'env', name: webhook.secretEnv } as const)
          : ({ kind: 'file', path: isAbsolute(webhook.secretFile!) ? webhook.secretFile! : resolve(ctx.baseDir ?? '.', webhook.secretFile!) } as const);
      const read = resolveSecretRef(ref, ctx, webhook.secretFile);
      if (read.ok) key = read.secret;
      else problem(webhook.secretEnv !== undefined ? 'secretEnv' : 'secretFile', read.code, read.message);
    }
    if (url !== undefined) {
      resolved.push({
        url,
        name: `${url.protocol}//${url.host}`,
        format: webhook.format ?? 'json',
        ...(webhook.events !== undefined ? { events: new Set(webhook.events) } : {}),
        ...(key !== undefined ? { key } : {}),
      });
    }
  });
  if (problems.length > 0) {
    throw new InvalidInputError(`invalid notify settings: ${problems.length} problem${problems.length === 1 ? '' : 's'}; nothing was sent`, problems, 'notify_invalid');
  }
  return resolved;
}
