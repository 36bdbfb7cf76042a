import { createLogUpdate } from 'log-update';
import type { OutputStream } from './io.js';

/**
 * One line at the bottom of a terminal that is rewritten in place (the progress of a long
 * listing or apply). Anything else written to the same terminal goes through `around`, which
 * takes the line away, writes, and puts it back, so logs and results never mix with it.
 * log-update does the terminal work (no escape codes written by hand).
 */
export class StatusLine {
  readonly #update: ReturnType<typeof createLogUpdate>;
  #text = '';

  constructor(stream: OutputStream) {
    // A pseudo-terminal without a window size (script, CI runners) reports 0 rows and columns,
    // and log-update would then draw nothing: assume the usual 80 × 24 instead.
    const sized = {
      write: (chunk: string) => stream.write(chunk),
      isTTY: stream.isTTY,
      get columns() {
        return stream.columns || 80;
      },
      get rows() {
        return stream.rows || 24;
      },
    };
    // showCursor: true leaves the cursor alone (hiding it writes to process.stderr, whatever the stream).
    this.#update = createLogUpdate(sized as unknown as NodeJS.WriteStream, { showCursor: true });
  }

  set(text: string): void {
    if (text === this.#text) return;
    this.#text = text;
    if (text === '') this.#update.clear();
    else this.#update(text);
  }

  /** Writes something else to the terminal without tearing the line. */
  around(write: () => void): void {
    if (this.#text === '') {
      write();
      return;
    }
    this.#update.clear();
    write();
    this.#update(this.#text);
  }

  /** Takes the line away for good. */
  clear(): void {
    if (this.#text !== '') this.#update.clear();
    this.#text = '';
    this.#update.done();
  }
}
