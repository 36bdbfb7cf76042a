import { scrub, scrubbedExcerpt } from '../secrets/index.js';

const REDACTED = '[redacted]';
// Keys whose values are secrets wherever they appear in a body.
const secretKey = /token|password|passwd|secret|authorization/i;
// The same, as `"key": "value"` / `key=value` in text that is not valid JSON (a truncated body).
// An auth scheme word (`Authorization: Bearer xyz`) belongs to the value.
// A value the scrubber already replaced (`password=[redacted]`) is taken whole: cut at its `]`,
// it left a stray bracket behind (`password="[redacted]"]`).
const secretPair = /("?[\w-]*(?:token|password|passwd|secret|authorization)[\w-]*"?\s*[:=]\s*)("(?:[^"\\]|\\.)*"?|\[redacted\]|(?:(?:bearer|basic|token)\s+)?[^\s,;&}\]]+)/gi;
const bearer = /(bearer\s+)[^\s"',;]+/gi;

function redactValue(value: unknown, depth: number): unknown {
  if (depth > 20) return REDACTED;
  if (Array.isArray(value)) return value.map((item) => redactValue(item, depth + 1));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      out[key] = secretKey.test(key) && inner !== null ? REDACTED : redactValue(inner, depth + 1);
    }
    return out;
  }
  return value;
}

/**
 * Removes every known secret (and `knownSecrets`) in any encoding (see secrets/known-secrets.ts),
 * then anything that looks like a credential: a bearer token, a `password=...` pair.
 */
export function redactText(text: string, knownSecrets: readonly string[] = []): string {
  return redactPatterns(scrub(text, knownSecrets));
}

function redactPatterns(text: string): string {
  return text.replace(bearer, `$1${REDACTED}`).replace(secretPair, `$1"${REDACTED}"`);
}

/**
 * A short, one-line excerpt of a response body for an error message. A JSON body has its
 * secret-named fields blanked first; then secrets are removed before the text is cut, so a
 * secret straddling the cut cannot leave a prefix behind.
 */
export function bodyExcerpt(body: string, knownSecrets: readonly string[] = [], maxLength = 160): string {
  let text: string;
  try {
    text = JSON.stringify(redactValue(JSON.parse(body), 0));
  } catch {
    text = body;
  }
  const excerpt = textExcerpt(text, knownSecrets, maxLength);
  return excerpt.length === 0 ? '(empty body)' : excerpt;
}

/**
 * Outside text (a body, a field of the service's error) as one short line for a message:
 * scrubbed, then folded onto one line, then cut.
 */
export function textExcerpt(text: string, knownSecrets: readonly string[], maxLength: number): string {
  return scrubbedExcerpt(text, maxLength, {
    extra: knownSecrets,
    // Control characters and line breaks would let a body forge log lines.
    // eslint-disable-next-line no-control-regex -- removing them is the point
    transform: (scrubbed) => redactPatterns(scrubbed).replace(/[\u0000-\u001f\u007f]+/g, ' ').trim(),
  });
}
