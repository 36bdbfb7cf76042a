/**
 * Characters that change how text is shown rather than what it says. Names and messages come
 * from the service and from files others write, and end up on terminals, CI logs and
 * GITHUB_STEP_SUMMARY:
 * - C0 controls and DEL: ESC starts terminal escape sequences, BEL rings, CR and BS overwrite
 *   what was printed, LF forges a line;
 * - C1 controls (U+0080–U+009F): U+009B is a one-character CSI on some terminals;
 * - U+2028 and U+2029 break lines in editors and browsers;
 * - the bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), which
 *   reorder what follows: U+202E shows `gnp.exe` as `exe.png` ("Trojan Source").
 */
// eslint-disable-next-line no-control-regex -- matching them is the point
const unsafe = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex -- the same without LF
const unsafeButNewline = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
// What JSON.stringify leaves raw of the above (it escapes C0 itself).
const unsafeInJson = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** `\u001b` for ESC: the escape a JSON reader or a person both understand. */
function unicodeEscape(ch: string): string {
  return `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

export interface EscapeOptions {
  /** Keep line feeds (multi-line messages on stderr); every other control is still escaped. */
  readonly keepNewlines?: boolean;
}

/** Free text with every character above written as a visible `\uXXXX` escape. */
export function escapeControls(text: string, options: EscapeOptions = {}): string {
  return text.replace(options.keepNewlines ? unsafeButNewline : unsafe, unicodeEscape);
}

/**
 * A JSON text with the characters above written as `\uXXXX` escapes: the same document for
 * a JSON reader, and bytes that cannot reorder or restyle a terminal showing it. They can
 * only occur inside strings, where the escape means the same character.
 */
export function jsonSafe(json: string): string {
  return json.replace(unsafeInJson, unicodeEscape);
}
