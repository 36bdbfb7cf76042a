import { defaultRetryOptions, type ClientOptions, type RetryOptions } from '../api/index.js';
import type { Settings } from '../settings/index.js';

/**
 * The client's retry options from the `retry` settings. The return type is exact: a key the
 * client does not know (the settings' `retryAfterCapMs` handed over as is was once silently
 * ignored) or one left out fails to compile. Pure.
 */
export function retryOptionsFrom(retry: Settings['retry']): RetryOptions {
  return {
    maxAttempts: retry.maxAttempts,
    maxElapsedMs: retry.maxElapsedMs,
    // Not a setting: a service that cannot be reached at all should fail fast everywhere.
    maxConnectElapsedMs: defaultRetryOptions.maxConnectElapsedMs,
    baseDelayMs: retry.baseDelayMs,
    maxDelayMs: retry.maxDelayMs,
    maxRetryAfterMs: retry.retryAfterCapMs,
  };
}

/** Everything the client takes from the settings, by name, key for key. Pure. */
export function clientOptionsFrom(settings: Settings, url: string): ClientOptions {
  return {
    url,
    token: settings.token,
    tokenFile: settings.tokenFile,
    refreshToken: settings.refreshToken,
    refreshTokenFile: settings.refreshTokenFile,
    timeoutMs: settings.http.timeoutMs,
    caFile: settings.http.caFile,
    ...(settings.http.caFileOrigin === undefined ? {} : { caFileOrigin: settings.http.caFileOrigin }),
    allowInsecureHttp: settings.http.allowInsecureHttp,
    rate: settings.rate,
    initialRate: settings.initialRate,
    concurrency: settings.concurrency,
    pageSize: settings.pageSize,
    listDeadlineMs: settings.listDeadlineMs,
    maxResponseBytes: settings.http.maxResponseBytes,
    retry: retryOptionsFrom(settings.retry),
  };
}
