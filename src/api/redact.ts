const REDACTED = '[redacted]';
// Keys whose values are secrets wherever they appear in a body.
const secretKey = /token|password|passwd|secret|authorization/i;
// The same, as `"key": "value"` / `key=value` in text that is not valid JSON (a truncated body).
// An auth scheme word (`Authorization: Bearer xyz`) belongs to the value.
const secretPair = /("?[\w-]*(?:token|password|passwd|secret|authorization)[\w-]*"?\s*[:=]\s*)("(?:[^"\\]|\\.)*"?|(?:(?:bearer|basic|token)\s+)?[^\s,;&}\]]+)/gi;
const bearer = /(bearer\s+)[^\s"',;]+/gi;
/**
 * Shorter known secrets are not searched for: replacing every "ab" would garble the text,
 * and the key-based rules above already cover structured bodies.
 */
const minKnownSecretLength = 4;

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

/** Replaces every occurrence of the known secret values, and anything that looks like one. */
export function redactText(text: string, knownSecrets: readonly string[] = []): string {
  let out = text;
  for (const secret of knownSecrets) {
    if (secret.length >= minKnownSecretLength) out = out.split(secret).join(REDACTED);
  }
  return out.replace(bearer, `$1${REDACTED}`).replace(secretPair, `$1"${REDACTED}"`);
}

/**
 * A short, one-line excerpt of a response body for an error message. Secrets are removed
 * before the text is cut, so a secret straddling the cut cannot leave a prefix behind.
 */
export function bodyExcerpt(body: string, knownSecrets: readonly string[] = [], maxLength = 160): string {
  let text: string;
  try {
    text = JSON.stringify(redactValue(JSON.parse(body), 0));
  } catch {
    text = body;
  }
  // Control characters and line breaks would let a body forge log lines.
  // eslint-disable-next-line no-control-regex -- removing them is the point
  const oneLine = redactText(text, knownSecrets).replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  if (oneLine.length === 0) return '(empty body)';
  return oneLine.length > maxLength ? `${oneLine.slice(0, maxLength)}…` : oneLine;
}
