/**
 * Opaque page cursors. A cursor names the id of the first item of a page (keyset paging), so
 * a page stays correct when items before it are deleted, and it maps to a position by binary
 * search instead of a scan. The id and a check byte are scrambled by an invertible 32-bit
 * mix, so cursors look random: they are neither offsets nor page numbers, a client cannot do
 * arithmetic on them, and a made-up value is almost always rejected (400).
 *
 * Cursor 0 is reserved for the first page (as the real service does); encoded cursors are never 0.
 */

/** Ids must fit 24 bits so that id and check byte fit 32. */
export const MAX_CURSOR_ID = 0xffffff;

const M1 = 0x7feb352d;
const M2 = 0x846ca68b;
const M1_INV = inverseMod32(M1);
const M2_INV = inverseMod32(M2);

export function encodeCursor(id: number, key: number): number {
  if (!Number.isInteger(id) || id < 1 || id > MAX_CURSOR_ID) throw new RangeError(`cursor id out of range: ${id}`);
  const packed = ((id << 8) | checkByte(id, key)) >>> 0;
  return mix((packed ^ key) >>> 0) + 1;
}

/** The id a cursor names, or null when the value is not a cursor this key made. */
export function decodeCursor(cursor: number, key: number): number | null {
  if (!Number.isSafeInteger(cursor) || cursor < 1 || cursor > 0x1_0000_0000) return null;
  const packed = (unmix(cursor - 1) ^ key) >>> 0;
  const id = packed >>> 8;
  if (id < 1 || (packed & 0xff) !== checkByte(id, key)) return null;
  return id;
}

function checkByte(id: number, key: number): number {
  return mix((id ^ Math.imul(key, 0x9e3779b1)) >>> 0) & 0xff;
}

/** "lowbias32": xorshift-multiply rounds, each step invertible on 32-bit integers. */
function mix(x: number): number {
  x = (x ^ (x >>> 16)) >>> 0;
  x = Math.imul(x, M1) >>> 0;
  x = (x ^ (x >>> 15)) >>> 0;
  x = Math.imul(x, M2) >>> 0;
  x = (x ^ (x >>> 16)) >>> 0;
  return x;
}

function unmix(x: number): number {
  x = (x ^ (x >>> 16)) >>> 0;
  x = Math.imul(x, M2_INV) >>> 0;
  x = (x ^ (x >>> 15) ^ (x >>> 30)) >>> 0;
  x = Math.imul(x, M1_INV) >>> 0;
  x = (x ^ (x >>> 16)) >>> 0;
  return x;
}

/** Multiplicative inverse of an odd number modulo 2^32 (Newton's iteration). */
function inverseMod32(a: number): number {
  let x = a;
  for (let i = 0; i < 5; i += 1) x = Math.imul(x, 2 - Math.imul(a, x)) >>> 0;
  return x >>> 0;
}
