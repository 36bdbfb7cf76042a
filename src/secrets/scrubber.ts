import { maxExpansion, readings, type Reading } from './readings.js';

export const redactedMark = '[redacted]';

/**
 * Shorter values are not searched for: replacing every "ab" would garble the text. A
 * password that short is refused by any service worth syncing to.
 */
const minSecretLength = 4;

export type Range = readonly [number, number];

/** The forms of one value a server may echo besides itself: trimmed, and in either Unicode normal form. */
function variants(value: string): string[] {
  const forms = new Set([value, value.trim(), value.normalize('NFC'), value.normalize('NFD')]);
  return [...forms].filter((form) => form.length >= minSecretLength);
}

export function mergeRanges(ranges: Range[]): Range[] {
  ranges.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const merged: [number, number][] = [];
  for (const [start, end] of ranges) {
    const last = merged[merged.length - 1];
    if (last !== undefined && start <= last[1]) last[1] = Math.max(last[1], end);
    else merged.push([start, end]);
  }
  return merged;
}

interface LengthTable {
  readonly length: number;
  /** base^length mod 2^32. */
  readonly power: number;
  /**
   * Values of this length: their check (checkOf) by their hash; one number when alone, as
   * nearly all are. Not the values themselves: 100k listed apikey tokens of 150 characters
   * would hold ~17 MB for the whole run (test/bench).
   */
  readonly byHash: Map<number, number | number[]>;
}

const base = 0x01000193;
const filterShift = 10;
const filterBits = 2 ** (32 - filterShift); // odd, so powers of it never vanish mod 2^32

/** Polynomial hash mod 2^32 of text[from, to). */
function hashOf(text: string, from: number, to: number): number {
  let h = 0;
  for (let i = from; i < to; i += 1) h = (Math.imul(h, base) + text.charCodeAt(i)) | 0;
  return h;
}

/**
 * A second, unrelated hash of text[from, to) (FNV-1a, 30 bits so it is stored unboxed): a
 * window whose hash and check both match a known value of its length is taken for it. With
 * 62 bits together, 100k known values and a 10 MB text read in a few readings, the chance of
 * one wrong match is below 10^-5; it would redact text that is not a secret, never the reverse.
 */
function checkOf(text: string, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i += 1) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 2;
}

/**
 * Finds and removes known secret values in text, whatever way the text encodes them (see
 * readings.ts). Values are looked up by length and a rolling hash, then a second hash, so the
 * cost per character of text grows with the number of distinct lengths, not of secrets (100k
 * listed apikey tokens share one or two lengths).
 */
export class SecretScrubber {
  /** One table per length, longest first. */
  #tables: LengthTable[] = [];
  /** First code units of known values: most positions of a text are rejected by one lookup. */
  readonly #heads = new Uint8Array(0x10000);
  /** One bit per bucket of hashes of known values: most hash lookups end here. */
  readonly #filter = new Uint8Array(filterBits >>> 3);
  /** Whether a known value holds a space (only then is `+` read as one). */
  #spaces = false;
  #longest = 0;

  constructor(values: Iterable<string> = []) {
    for (const value of values) this.add(value);
  }

  /** Registers a value; shorter than minSecretLength it is ignored. */
  add(value: string): void {
    // One pass over the value: both hashes, and whether it is printable ASCII (a token), whose
    // only form is itself (100k of them are registered per listing).
    let hash = 0;
    let check = 0x811c9dc5;
    let plain = true;
    for (let i = 0; i < value.length; i += 1) {
      const unit = value.charCodeAt(i);
      hash = (Math.imul(hash, base) + unit) | 0;
      check = Math.imul(check ^ unit, 0x01000193);
      if (unit < 0x21 || unit > 0x7e) plain = false;
    }
    if (plain) {
      if (value.length >= minSecretLength) this.#addForm(value, hash, check >>> 2);
      return;
    }
    for (const form of variants(value)) this.#addForm(form, hashOf(form, 0, form.length), checkOf(form, 0, form.length));
  }

  #addForm(form: string, hash: number, check: number): void {
    const { byHash } = this.#table(form.length);
    const checks = byHash.get(hash);
    if (checks === undefined) byHash.set(hash, check);
    else if (typeof checks === 'number') {
      if (checks !== check) byHash.set(hash, [checks, check]);
    } else if (!checks.includes(check)) checks.push(check);
    this.#heads[form.charCodeAt(0)] = 1;
    const bucket = hash >>> filterShift;
    this.#filter[bucket >>> 3]! |= 1 << (bucket & 7);
    if (form.includes(' ')) this.#spaces = true;
    this.#longest = Math.max(this.#longest, form.length);
  }

  #table(length: number): LengthTable {
    const existing = this.#tables.find((t) => t.length === length);
    if (existing) return existing;
    let power = 1;
    for (let k = 0; k < length; k += 1) power = Math.imul(power, base);
    const table = { length, power, byHash: new Map() };
    this.#tables = [...this.#tables, table].sort((a, b) => b.length - a.length);
    return table;
  }

  get empty(): boolean {
    return this.#tables.length === 0;
  }

  /** Code units of text an excerpt must read past its cut so a secret straddling it is still seen whole. */
  get margin(): number {
    return this.#longest * maxExpansion;
  }

  /** Where known values occur in `text`, in any reading, as ranges of `text`. */
  find(text: string): Range[] {
    if (this.empty || text.length < minSecretLength) return [];
    const found: Range[] = [];
    for (const reading of readings(text, { plusIsSpace: this.#spaces })) this.#findIn(reading, found);
    return found.length === 0 ? found : mergeRanges(found);
  }

  #findIn(reading: Reading, found: Range[]): void {
    const { text, start, end } = reading;
    const n = text.length;
    // prefix[i]: hash of text[0, i); the hash of text[p, p + L) is prefix[p + L] - prefix[p] * base^L.
    const prefix = new Int32Array(n + 1);
    for (let i = 0; i < n; i += 1) prefix[i + 1] = (Math.imul(prefix[i]!, base) + text.charCodeAt(i)) | 0;
    const heads = this.#heads;
    const filter = this.#filter;
    const tables = this.#tables;
    for (let p = 0; p <= n - minSecretLength; p += 1) {
      if (heads[text.charCodeAt(p)] === 0) continue;
      for (const { length, power, byHash } of tables) {
        if (p + length > n) continue;
        const hash = (prefix[p + length]! - Math.imul(prefix[p]!, power)) | 0;
        const bucket = hash >>> filterShift;
        if ((filter[bucket >>> 3]! & (1 << (bucket & 7))) === 0) continue;
        const checks = byHash.get(hash);
        if (checks === undefined) continue;
        const check = checkOf(text, p, p + length);
        if (!(typeof checks === 'number' ? checks === check : checks.includes(check))) continue;
        found.push([start ? start[p]! : p, end ? end[p + length - 1]! : p + length]);
        // Longest first: a shorter value inside this one is covered by it.
        break;
      }
    }
  }
}

/** `text` up to `keepTo` with each range replaced by the mark; a range that starts before keepTo is replaced whole. */
export function replaceRanges(text: string, ranges: readonly Range[], keepTo: number): string {
  if (ranges.length === 0) return keepTo >= text.length ? text : text.slice(0, keepTo);
  const parts: string[] = [];
  let at = 0;
  for (const [start, end] of ranges) {
    if (start >= keepTo) break;
    parts.push(text.slice(at, start), redactedMark);
    at = end;
  }
  if (at < keepTo) parts.push(text.slice(at, keepTo));
  return parts.join('');
}
