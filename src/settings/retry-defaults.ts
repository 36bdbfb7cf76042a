/**
 * The retry loop's defaults, declared once: the settings' defaults and the client's (for
 * callers that pass no retry options) both read them, so they cannot disagree again (they
 * once did on maxElapsedMs: 120 s here, 300 s there).
 */
export const retryDefaults = {
  maxAttempts: 8,
  maxElapsedMs: 120_000,
  maxConnectElapsedMs: 2_000,
  baseDelayMs: 250,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 300_000,
} as const;
