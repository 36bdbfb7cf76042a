import { describe, expect, it } from 'vitest';
import { generatePassword, passwordAlphabets, scrub } from '../../../src/secrets/index.js';
import { passwordClasses } from '../../../src/model/index.js';

describe('generatePassword', () => {
  it('has the declared length and at least one character of each declared class, and no other', () => {
    for (let i = 0; i < 200; i += 1) {
      const value = generatePassword({ length: 12, classes: ['lower', 'upper', 'digit', 'symbol'] }).reveal();
      expect(value).toHaveLength(12);
      for (const c of passwordClasses) expect([...value].some((ch) => passwordAlphabets[c].includes(ch)), c).toBe(true);
    }
    const digits = generatePassword({ length: 40, classes: ['digit'] }).reveal();
    expect(digits).toMatch(/^[0-9]{40}$/);
  });

  it('draws every character of the alphabet, about evenly (no modulo bias to speak of)', () => {
    const counts = new Map<string, number>();
    const all = Object.values(passwordAlphabets).join('');
    for (let i = 0; i < 400; i += 1) for (const ch of generatePassword({ length: 100, classes: [...passwordClasses] }).reveal()) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect([...counts.keys()].sort()).toEqual([...all].sort());
    // 40,000 draws over 86 characters: ~465 each; a biased draw (e.g. % over a byte) would skew some by ~30 %.
    const expected = 40_000 / all.length;
    for (const [ch, n] of counts) expect(Math.abs(n - expected) / expected, ch).toBeLessThan(0.25);
  });

  it('is a known secret from the moment it exists: scrubbed from any text', () => {
    const secret = generatePassword({ length: 24, classes: ['lower', 'digit'] });
    expect(String(secret)).toBe('[redacted]');
    expect(JSON.stringify({ secret })).toBe('{"secret":"[redacted]"}');
    expect(scrub(`echoed: ${secret.reveal()}`)).toBe('echoed: [redacted]');
  });

  it('refuses a length that cannot hold one of each class', () => {
    expect(() => generatePassword({ length: 3, classes: ['lower', 'upper', 'digit', 'symbol'] })).toThrow('cannot hold one of each');
  });
});
