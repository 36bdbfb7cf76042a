import type { Reply } from './reply.js';

/**
 * The `echo` fault: an error answer that quotes the request the way careless services and
 * proxies do — the body it was sent, every string in it (a password), the bearer token and
 * the token of the apikey the path names — each raw, JSON-escaped and URL-encoded. Chaos
 * tests then look for those secrets, in every form, in everything amsync printed or wrote.
 */

export interface EchoedRequest {
  readonly method: string;
  readonly path: string;
  /** The raw request body; null when it was too large to read. */
  readonly body: string | null;
  readonly authorization: string | undefined;
  /** The token of the apikey the path names, when it names one that exists. */
  readonly itemToken: string | undefined;
}

/** Every string of a parsed JSON value, depth first. */
function stringsIn(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) stringsIn(v, out);
  else if (typeof value === 'object' && value !== null) for (const v of Object.values(value)) stringsIn(v, out);
  return out;
}

function parsedStrings(body: string | null): string[] {
  if (body === null || body.trim() === '') return [];
  try {
    return stringsIn(JSON.parse(body) as unknown);
  } catch {
    return [];
  }
}

/** URL-encoded; a lone surrogate (which encodeURIComponent refuses) as U+FFFD, as UTF-8 has it. */
function urlEncoded(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return encodeURIComponent(value.replace(/[\uD800-\uDFFF]/g, '\uFFFD'));
  }
}

/** One value in the three forms a server writes it back in. */
function quoted(value: string): string {
  return `raw=${value} json=${JSON.stringify(value).slice(1, -1)} url=${urlEncoded(value)}`;
}

export function echoText(request: EchoedRequest): string {
  const bearer = request.authorization?.replace(/^Bearer\s+/i, '');
  const values = [...parsedStrings(request.body), ...(bearer ? [bearer] : []), ...(request.itemToken ? [request.itemToken] : [])];
  return [`${request.method} ${request.path} failed; you sent ${request.body ?? '(too large)'}`, `authorization: ${request.authorization ?? '(none)'}`, ...values.map(quoted)].join(' | ');
}

/** The answer of an `echo` rule: `status` with the quoting text as the error body or a page. */
export function echoReply(status: number, mode: 'json' | 'text', request: EchoedRequest, headers: Record<string, string> = {}): Reply {
  const text = echoText(request);
  if (mode === 'text') return { status, raw: `<html><body><h1>${status}</h1><p>${text}</p></body></html>`, contentType: 'text/html; charset=utf-8', headers };
  return { status, body: { errors: [{ field: 'request', type: 'rule', msg: text }] }, headers };
}
