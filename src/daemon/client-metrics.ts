import type { AmClient, CredentialEvent } from '../api/index.js';
import type { ClientMetrics } from '../obs/index.js';

/** The client's events feed the metrics; returns the unsubscribe. */
export function attachClientMetrics(client: AmClient, metrics: ClientMetrics, options: { readonly rate?: boolean } = {}): () => void {
  // A fleet has one limiter per target: one gauge cannot say all their rates.
  const withRate = options.rate !== false;
  const onRequest = (e: { method: string; route: string; status: number | undefined; error: string | undefined; durationMs: number; rate: number }) => {
    metrics.observeApiRequest({ method: e.method, route: e.route, status: e.status, error: e.error, durationMs: e.durationMs });
    if (withRate) metrics.setLimiterRate(client.limiter.rate);
  };
  const onRetry = (e: { method: string; route: string; reason: string }) => metrics.observeRetry({ method: e.method, route: e.route, reason: e.reason });
  const onThrottle = (e: { method: string; route: string; status: number; rate: number }) => {
    metrics.observeThrottle({ method: e.method, route: e.route, status: e.status });
    if (withRate) metrics.setLimiterRate(e.rate);
  };
  const onCredential = (e: CredentialEvent) => metrics.observeCredential(e);
  client.events.on('request', onRequest);
  client.events.on('retry', onRetry);
  client.events.on('throttle', onThrottle);
  client.events.on('credential', onCredential);
  if (withRate) metrics.setLimiterRate(client.limiter.rate);
  return () => {
    client.events.off('request', onRequest);
    client.events.off('retry', onRetry);
    client.events.off('throttle', onThrottle);
    client.events.off('credential', onCredential);
  };
}
