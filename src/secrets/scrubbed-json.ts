import { scrub } from './known-secrets.js';

/**
 * `value` as one line of JSON with every known secret removed, for text that leaves amsync as
 * JSON (audit lines, webhook bodies). Every string in it, object keys included, is scrubbed
 * before it is serialised, so a secret never reaches the text; then the whole text passes the
 * one redaction step again (defense in depth: an escaped form the first pass could not see).
 *
 * The second pass can only change text amsync wrote around the strings when a short known
 * secret happens to equal it (a password `null` or `1234`, matching `"id":null` or an id).
 * When that leaves text that is no longer JSON, the first form is used: it already holds no
 * secret, and a consumer gets a line it can parse.
 */
export function scrubbedJson(value: unknown): string {
  const plain: unknown = JSON.parse(JSON.stringify(value) ?? 'null');
  const clean = JSON.stringify(scrubLeaves(plain));
  const twice = scrub(clean);
  if (twice === clean) return clean;
  try {
    JSON.parse(twice);
    return twice;
  } catch {
    return clean;
  }
}

function scrubLeaves(value: unknown): unknown {
  if (typeof value === 'string') return scrub(value);
  if (Array.isArray(value)) return value.map(scrubLeaves);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) out[scrub(key)] = scrubLeaves(inner);
    return out;
  }
  return value;
}
