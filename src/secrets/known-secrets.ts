import { mergeRanges, redactedMark, replaceRanges, SecretScrubber, type Range } from './scrubber.js';

/**
 * Every secret this process has held: bearer tokens, passwords resolved from the desired
 * file, apikey tokens from any response. Process-wide on purpose: a secret met anywhere
 * (a listing, a token file re-read on a 401) must be removed from output everywhere (an
 * error message built elsewhere, a log line, a report).
 */
const known = new SecretScrubber();

/**
 * Makes `value` a known secret: from now on it is removed from everything amsync prints,
 * logs or writes. `new Secret(value)` calls this, so a credential read into a Secret (a
 * bearer, refresh or access token, a password, an apikey token) needs nothing more.
 */
export function registerSecret(value: string): void {
  known.add(value);
}

function scrubbers(extra: readonly string[]): SecretScrubber[] {
  return extra.length === 0 ? [known] : [known, new SecretScrubber(extra)];
}

function findAll(text: string, extra: readonly string[]): Range[] {
  const found = scrubbers(extra).flatMap((s) => s.find(text));
  return found.length === 0 ? found : mergeRanges(found);
}

/**
 * The one redaction step, run where text leaves amsync (stdout, stderr, logs, report, plan
 * and summary files) and where outside text enters a message: every known secret, and
 * `extra`, replaced by `[redacted]` wherever it appears raw, JSON-, URL- or HTML-encoded.
 */
export function scrub(text: string, extra: readonly string[] = []): string {
  if (known.empty && extra.length === 0) return text;
  if (text.length <= chunkLength) return replaceRanges(text, findAll(text, extra), text.length);
  return scrubInChunks(text, extra);
}

/** Texts are read in pieces this long: a reading keeps two numbers per code unit. */
const chunkLength = 32 * 1024;

/**
 * A long text (a 100k-item plan file) piece by piece, each piece read `margin` past its end:
 * a secret that starts in a piece is seen whole and removed whole, whichever piece it ends in.
 */
function scrubInChunks(text: string, extra: readonly string[]): string {
  const margin = Math.max(...scrubbers(extra).map((s) => s.margin));
  const parts: string[] = [];
  let at = 0; // text before this index is already in `parts`
  for (let from = 0; from < text.length; ) {
    const to = pieceEnd(text, from);
    for (const [start, end] of findAll(text.slice(from, Math.min(text.length, to + margin)), extra)) {
      if (from + start >= to) break;
      if (from + end <= at) continue;
      if (from + start >= at) parts.push(text.slice(at, from + start), redactedMark);
      at = from + end;
    }
    from = Math.max(to, at);
  }
  parts.push(text.slice(at));
  return parts.join('');
}

/** Where a piece starting at `from` ends: at a line break when one is near, so escapes are not split. */
function pieceEnd(text: string, from: number): number {
  const end = Math.min(text.length, from + chunkLength);
  if (end === text.length) return end;
  const newline = text.indexOf('\n', end);
  return newline !== -1 && newline - end < 4096 ? newline + 1 : end;
}

export interface ExcerptOptions {
  /** Values to remove besides the known ones (a request's own secrets). */
  readonly extra?: readonly string[];
  /** Runs on the scrubbed text before it is cut (more redaction, one-line folding). */
  readonly transform?: (scrubbed: string) => string;
}

/**
 * At most `max` code units of `text` (and `…` when cut), scrubbed before the cut: the text
 * is read `margin` past the cut so a secret straddling it is seen whole and removed whole,
 * never leaving a prefix behind. Only the start of a huge text is read at all.
 */
export function scrubbedExcerpt(text: string, max: number, options: ExcerptOptions = {}): string {
  const extra = options.extra ?? [];
  const margin = Math.max(...scrubbers(extra).map((s) => s.margin));
  const keepTo = Math.min(text.length, max + margin);
  const window = text.slice(0, keepTo + margin);
  let out = replaceRanges(window, findAll(window, extra), keepTo);
  if (options.transform) out = options.transform(out);
  return keepTo < text.length || out.length > max ? `${out.slice(0, max)}…` : out;
}
