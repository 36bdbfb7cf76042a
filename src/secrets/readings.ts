/**
 * The ways a server writes back a value it was sent, undone: a secret echoed JSON-escaped
 * (`\"`, `\\`, `\/`, `\u00e9` or `\u00E9`), URL-encoded (`%C3%A9`, `+` for a space),
 * HTML-escaped (`&quot;`, `&#233;`), or two of these in a row (a JSON body quoted inside a
 * JSON string). Each reading keeps, for every code unit it produced, the range of the
 * original text it was read from, so a match in any reading removes the original bytes.
 */
export interface Reading {
  readonly text: string;
  /** Original range of code unit k: [start[k], end[k]). Absent: the original text itself. */
  readonly start?: readonly number[];
  readonly end?: readonly number[];
}

interface Decoded {
  readonly text: string;
  /** Absent while every code unit came from the one at the same index (`+` read as a space). */
  readonly start?: number[];
  readonly end?: number[];
}

type Decoder = (text: string, options: ReadingOptions) => Decoded | undefined;

export interface ReadingOptions {
  /**
   * Read `+` as a space (form encoding). Off unless a secret holds a space: a text plan has a
   * `+` on every line, and reading it again for nothing would double the cost.
   */
  readonly plusIsSpace: boolean;
}

class Builder {
  readonly parts: string[] = [];
  length = 0;
  // Materialised at the first code unit that does not come from the one at its own index:
  // until then the mapping is the identity and costs nothing.
  start: number[] | undefined;
  end: number[] | undefined;
  changed = false;

  push(units: string, from: number, to: number): void {
    this.parts.push(units);
    if (this.start === undefined && (units.length !== 1 || to - from !== 1 || from !== this.length)) {
      this.start = Array.from({ length: this.length }, (_, k) => k);
      this.end = Array.from({ length: this.length }, (_, k) => k + 1);
    }
    if (this.start !== undefined && this.end !== undefined) {
      for (let k = 0; k < units.length; k += 1) {
        this.start.push(from);
        this.end.push(to);
      }
    }
    this.length += units.length;
    if (to - from !== units.length) this.changed = true;
  }

  done(): Decoded | undefined {
    if (!this.changed) return undefined;
    return this.start === undefined ? { text: this.parts.join('') } : { text: this.parts.join(''), start: this.start, end: this.end! };
  }
}

const isHex = (text: string): boolean => /^[0-9a-fA-F]+$/.test(text);
const shortEscapes: Readonly<Record<string, string>> = { n: '\n', r: '\r', t: '\t', b: '\b', f: '\f', v: '\v', '0': '\0' };

/** JSON, JavaScript and Markdown backslash escapes: `\uXXXX` and `\xXX` in either case, `\n`, `\"`, `\/`, `\*`... */
function backslashes(text: string): Decoded | undefined {
  if (!text.includes('\\')) return undefined;
  const out = new Builder();
  for (let i = 0; i < text.length; ) {
    const c = text[i]!;
    const d = text[i + 1];
    if (c !== '\\' || d === undefined) {
      out.push(c, i, i + 1);
      i += 1;
    } else if (d === 'u' && isHex(text.slice(i + 2, i + 6)) && i + 6 <= text.length) {
      out.push(String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16)), i, i + 6);
      i += 6;
    } else if (d === 'x' && isHex(text.slice(i + 2, i + 4)) && i + 4 <= text.length) {
      out.push(String.fromCharCode(parseInt(text.slice(i + 2, i + 4), 16)), i, i + 4);
      i += 4;
    } else if (shortEscapes[d] !== undefined) {
      out.push(shortEscapes[d], i, i + 2);
      i += 2;
    } else if (/[!-/:-@[-`{-~ ]/.test(d)) {
      out.push(d, i, i + 2);
      i += 2;
    } else {
      out.push(c, i, i + 1);
      i += 1;
    }
  }
  return out.done();
}

function byteAt(text: string, i: number): number | undefined {
  if (text[i] !== '%') return undefined;
  const hex = text.slice(i + 1, i + 3);
  return hex.length === 2 && isHex(hex) ? parseInt(hex, 16) : undefined;
}

/** One character of a %-encoded UTF-8 sequence at i, or a lone %XX byte read as Latin-1. */
function percentChar(text: string, i: number): { units: string; length: number } | undefined {
  const lead = byteAt(text, i);
  if (lead === undefined) return undefined;
  // Bytes that cannot lead a UTF-8 sequence (0x80–0xC1, 0xF5–0xFF) are read alone.
  const size = lead < 0xc2 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : lead < 0xf5 ? 4 : 1;
  let point = size === 1 ? lead : lead & (0xff >> (size + 1));
  for (let k = 1; k < size; k += 1) {
    const next = byteAt(text, i + 3 * k);
    if (next === undefined || (next & 0xc0) !== 0x80) return { units: String.fromCharCode(lead), length: 3 };
    point = (point << 6) | (next & 0x3f);
  }
  if (point > 0x10ffff) return { units: String.fromCharCode(lead), length: 3 };
  return { units: String.fromCodePoint(point), length: 3 * size };
}

/** URL encoding: `%XX` in either case (UTF-8, or Latin-1 for a lone byte), and `+` for a space (forms). */
function percents(text: string, plusIsSpace: boolean): Decoded | undefined {
  if (!text.includes('%') && !(plusIsSpace && text.includes('+'))) return undefined;
  const out = new Builder();
  for (let i = 0; i < text.length; ) {
    const c = text[i]!;
    const decoded = c === '%' ? percentChar(text, i) : undefined;
    if (decoded) {
      out.push(decoded.units, i, i + decoded.length);
      i += decoded.length;
    } else {
      const space = plusIsSpace && c === '+';
      out.push(space ? ' ' : c, i, i + 1);
      if (space) out.changed = true;
      i += 1;
    }
  }
  return out.done();
}

const named: Readonly<Record<string, string>> = { quot: '"', amp: '&', lt: '<', gt: '>', apos: "'", nbsp: '\u00a0' };
const entity = /&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([a-zA-Z]{2,4}));/y;

/** HTML character references: `&quot;`, `&#34;`, `&#x22;`. */
function entities(text: string): Decoded | undefined {
  if (!text.includes('&')) return undefined;
  const out = new Builder();
  for (let i = 0; i < text.length; ) {
    entity.lastIndex = i;
    const m = text[i] === '&' ? entity.exec(text) : null;
    const point = m === null ? undefined : m[1] !== undefined ? Number(m[1]) : m[2] !== undefined ? parseInt(m[2], 16) : undefined;
    const units = m === null ? undefined : point !== undefined ? (point <= 0x10ffff ? String.fromCodePoint(point) : undefined) : named[m[3]!.toLowerCase()];
    if (m !== null && units !== undefined) {
      out.push(units, i, i + m[0].length);
      i += m[0].length;
    } else {
      out.push(text[i]!, i, i + 1);
      i += 1;
    }
  }
  return out.done();
}

const decoders: readonly Decoder[] = [backslashes, (text, options) => percents(text, options.plusIsSpace), entities];

/** Maps a decoding of `outer` back to the original text. */
function compose(outer: Reading, inner: Decoded): Reading {
  if (inner.start === undefined || inner.end === undefined) return { ...outer, text: inner.text };
  if (outer.start === undefined || outer.end === undefined) return inner;
  const { start, end } = outer;
  return {
    text: inner.text,
    start: inner.start.map((s) => start[s]!),
    end: inner.end.map((e) => end[e - 1]!),
  };
}

/**
 * The text as written, and as each decoder and each pair of decoders reads it. Decoders that
 * find nothing to decode are skipped, so plain text has a single reading.
 */
export function readings(text: string, options: ReadingOptions = { plusIsSpace: true }, depth = 2): Reading[] {
  const all: Reading[] = [{ text }];
  const seen = new Set([text]);
  let frontier: Reading[] = all.slice();
  for (let level = 0; level < depth; level += 1) {
    const next: Reading[] = [];
    for (const reading of frontier) {
      for (const decode of decoders) {
        const decoded = decode(reading.text, options);
        if (decoded === undefined || seen.has(decoded.text)) continue;
        seen.add(decoded.text);
        const composed = compose(reading, decoded);
        all.push(composed);
        next.push(composed);
      }
    }
    frontier = next;
  }
  return all;
}

/** The most code units one code unit of a secret takes in any reading above (`%25C3%25A9` for é: 10). */
export const maxExpansion = 12;
