import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { got, type Got } from 'got';

export interface WebhookRequest {
  readonly url: URL;
  /** The exact bytes that were signed. */
  readonly body: Uint8Array;
  readonly headers: Readonly<Record<string, string>>;
  /** Aborts the attempt: its timeout, or the notifier closing. */
  readonly signal: AbortSignal;
}

export type WebhookOutcome =
  | { readonly kind: 'response'; readonly status: number; readonly retryAfter?: string }
  /** No answer: `aborted` (the signal), or the network's code (ECONNREFUSED, ECONNRESET...). */
  | { readonly kind: 'failure'; readonly code: string };

/** How a notification leaves the process; got in production, anything in a test. */
export interface WebhookTransport {
  /** One attempt. Never throws: a failure is an outcome. */
  post(request: WebhookRequest): Promise<WebhookOutcome>;
  /** Closes idle connections. */
  close(): void;
}

/**
 * got, with its own retry off (the notifier decides, on its own clock), redirects not
 * followed (a redirect would carry the signed body elsewhere), TLS verification on, and no
 * keep-alive (deliveries are rare; an idle socket would outlive the run). The answer's body is
 * never read: the status is all a delivery needs, and a receiver that streams without end
 * costs nothing. The timeout is the caller's signal, so it runs on the notifier's clock.
 */
export function createWebhookTransport(options: { readonly userAgent: string }): WebhookTransport {
  const agents = { http: new HttpAgent({ keepAlive: false }), https: new HttpsAgent({ keepAlive: false }) };
  const client: Got = got.extend({
    headers: { 'user-agent': options.userAgent },
    retry: { limit: 0 },
    followRedirect: false,
    throwHttpErrors: false,
    http2: false,
    agent: agents,
    https: { rejectUnauthorized: true },
  });
  return {
    post(request) {
      return new Promise<WebhookOutcome>((resolve) => {
        if (request.signal.aborted) {
          resolve({ kind: 'failure', code: 'aborted' });
          return;
        }
        const stream = client.stream.post(request.url, { body: Buffer.from(request.body), headers: request.headers });
        let settled = false;
        const settle = (outcome: WebhookOutcome): void => {
          if (settled) return;
          settled = true;
          request.signal.removeEventListener('abort', onAbort);
          resolve(outcome);
          stream.destroy();
        };
        const onAbort = (): void => settle({ kind: 'failure', code: 'aborted' });
        request.signal.addEventListener('abort', onAbort, { once: true });
        stream.on('response', (response: { statusCode: number; headers: Record<string, string | string[] | undefined> }) => {
          const retryAfter = response.headers['retry-after'];
          settle({ kind: 'response', status: response.statusCode, ...(typeof retryAfter === 'string' ? { retryAfter } : {}) });
        });
        stream.on('error', (error: unknown) => {
          const code = (error as { code?: unknown } | null)?.code;
          settle({ kind: 'failure', code: typeof code === 'string' && code !== '' ? code : 'network' });
        });
      });
    },
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}
