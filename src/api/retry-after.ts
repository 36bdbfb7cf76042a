const delaySeconds = /^\d+$/;
// RFC 9110 HTTP-date forms all begin with a day name (IMF-fixdate, rfc850-date, asctime-date).
// Checking for it keeps Date.parse, which is lenient, from reading "1.5" as a calendar date.
const httpDate = /^(mon|tue|wed|thu|fri|sat|sun)[a-z]*,?\s/i;

/**
 * Milliseconds to wait from a `Retry-After` header value (RFC 9110 §10.2.3), in either form:
 * delay-seconds (`120`) or an HTTP-date, measured against `wallNowMs`. A date in the past gives 0.
 * Unparseable or absent: undefined (the caller falls back to backoff). Pure.
 */
export function parseRetryAfter(value: string | undefined, wallNowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (delaySeconds.test(text)) return Number(text) * 1000;
  if (!httpDate.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - wallNowMs);
}
