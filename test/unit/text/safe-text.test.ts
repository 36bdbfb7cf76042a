import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareStrings, escapeControls, jsonSafe } from '../../../src/text/index.js';

// Every character safe-text.ts promises to escape, written out here rather than taken from it.
const unsafe = [
  ...Array.from({ length: 0x20 }, (_, i) => String.fromCharCode(i)),
  ...Array.from({ length: 0x21 }, (_, i) => String.fromCharCode(0x7f + i)),
  '\u061c', '\u200e', '\u200f', '\u2028', '\u2029', '\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069',
];
const anyUnsafe = new RegExp(`[${unsafe.map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}]`);
const mixed = fc.string({ unit: fc.oneof(fc.constantFrom(...unsafe), fc.string({ minLength: 1, maxLength: 1, unit: 'grapheme' })) });

describe('text that reaches a terminal cannot restyle or reorder it', () => {
  it('escapeControls leaves none of the unsafe characters and writes each as \\uXXXX', () => {
    fc.assert(
      fc.property(mixed, (text) => {
        const out = escapeControls(text);
        expect(out).not.toMatch(anyUnsafe);
        // Undoing the escapes gives the text back: nothing is dropped, only made visible.
        expect(out.replace(/\\u([0-9a-f]{4})/g, (m, hex: string) => (unsafe.includes(String.fromCharCode(parseInt(hex, 16))) ? String.fromCharCode(parseInt(hex, 16)) : m))).toBe(text);
      }),
    );
    expect(escapeControls('gnp\u202e.exe\u001b[31m')).toBe('gnp\\u202e.exe\\u001b[31m');
  });

  it('keepNewlines keeps line feeds and still escapes carriage returns', () => {
    expect(escapeControls('a\nb\rc', { keepNewlines: true })).toBe('a\nb\\u000dc');
    expect(escapeControls('a\nb')).toBe('a\\u000ab');
  });

  it('jsonSafe gives the same JSON document with no unsafe character left raw', () => {
    fc.assert(
      fc.property(fc.jsonValue(), mixed, (value, text) => {
        const doc = { value, text };
        const out = jsonSafe(JSON.stringify(doc));
        expect(out).not.toMatch(anyUnsafe);
        expect(JSON.parse(out)).toEqual(JSON.parse(JSON.stringify(doc)));
      }),
    );
  });
});

describe('ordering is the same on every machine', () => {
  it('compareStrings orders by code unit, not by locale', () => {
    expect(['b', 'a', 'B', 'ä', 'A'].sort(compareStrings)).toEqual(['A', 'B', 'a', 'b', 'ä']);
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        expect(Math.sign(compareStrings(a, b)) + Math.sign(compareStrings(b, a))).toBe(0);
        expect(compareStrings(a, b) === 0).toBe(a === b);
      }),
    );
  });
});
