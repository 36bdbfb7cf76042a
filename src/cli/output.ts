import { scrub } from '../secrets/known-secrets.js';
import { escapeControls } from '../text/safe-text.js';

/**
 * The commands' only ways to stdout and stderr. Both pass the one redaction step (every
 * known secret, in every encoding, replaced by `[redacted]`), whatever the text was built from.
 */

/** The plan or report. Its renderer already escaped names and messages (the text one paints with ANSI colours). */
export function writeOut(text: string): void {
  process.stdout.write(scrub(text));
}

/** Messages and diagnostics: control and bidi characters escaped too, line breaks kept. */
export function writeErr(text: string): void {
  process.stderr.write(errText(text));
}

export function errText(text: string): string {
  return escapeControls(scrub(text), { keepNewlines: true });
}
