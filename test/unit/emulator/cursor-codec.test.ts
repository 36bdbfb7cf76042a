import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, MAX_CURSOR_ID } from '../../../src/emulator/cursor-codec.js';

describe('cursor codec', () => {
  it('round-trips ids and never makes 0 (reserved for the first page)', () => {
    for (const id of [1, 2, 3, 255, 256, 1000, 65_535, 99_999, 100_000, MAX_CURSOR_ID]) {
      const c = encodeCursor(id, 42);
      expect(c).not.toBe(0);
      expect(Number.isSafeInteger(c)).toBe(true);
      expect(decodeCursor(c, 42)).toBe(id);
    }
  });

  it('scrambles: consecutive ids give unrelated cursors', () => {
    const cursors = [1, 2, 3, 4].map((id) => encodeCursor(id, 7));
    expect(cursors[1]! - cursors[0]!).not.toBe(cursors[2]! - cursors[1]!);
  });

  it('refuses values it did not make, and cursors of another key', () => {
    let accepted = 0;
    for (let c = 1; c <= 5000; c += 1) if (decodeCursor(c, 7) !== null) accepted += 1;
    // The check byte lets about 1 in 256 made-up values through.
    expect(accepted).toBeLessThan(60);
    expect(decodeCursor(-1, 7)).toBeNull();
    expect(decodeCursor(1.5, 7)).toBeNull();
    expect(decodeCursor(2 ** 40, 7)).toBeNull();
    let crossKey = 0;
    for (let id = 1; id <= 1000; id += 1) if (decodeCursor(encodeCursor(id, 7), 8) === id) crossKey += 1;
    expect(crossKey).toBeLessThan(20);
  });

  it('refuses ids outside 1..MAX_CURSOR_ID', () => {
    expect(() => encodeCursor(0, 1)).toThrow(RangeError);
    expect(() => encodeCursor(MAX_CURSOR_ID + 1, 1)).toThrow(RangeError);
  });
});
