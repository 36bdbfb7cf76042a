import { scrub } from '../secrets/index.js';
import { escapeControls } from '../text/index.js';
import type { CliIo, OutputStream } from './io.js';

/** The CLI's io, every write redacted, and whether stdout was written to (the --json error document). */
export interface RedactedIo extends CliIo {
  stdoutUsed(): boolean;
}

/**
 * The commands' only ways to stdout and stderr: both pass the one redaction step (every
 * known secret, in every encoding, replaced by `[redacted]`), whatever the text was built
 * from. Renderers already escape names and messages (the text one paints with ANSI colours,
 * the progress line moves the cursor), so the streams do not escape control characters.
 */
export function redactedIo(io: CliIo): RedactedIo {
  let used = false;
  return {
    ...io,
    stdout: redacted(io.stdout, () => (used = true)),
    stderr: redacted(io.stderr),
    stdoutUsed: () => used,
  };
}

function redacted(stream: OutputStream, onWrite?: () => void): OutputStream {
  return {
    write: (chunk: string) => {
      if (chunk.length > 0) onWrite?.();
      return stream.write(scrub(chunk));
    },
    ...(stream.once === undefined ? {} : { once: (event: 'drain', listener: () => void) => stream.once!(event, listener) }),
    get isTTY() {
      return stream.isTTY;
    },
    get columns() {
      return stream.columns;
    },
    get rows() {
      return stream.rows;
    },
  };
}

/** Messages and diagnostics that quote outside text: control and bidi characters escaped too, line breaks kept. */
export function errText(text: string): string {
  return escapeControls(scrub(text), { keepNewlines: true });
}
