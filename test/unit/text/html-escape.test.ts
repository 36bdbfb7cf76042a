import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapeHtml } from '../../../src/text/index.js';

describe('escapeHtml: a name from the service stays text on the status page', () => {
  it.each([
    ['plain', 'deploy', 'deploy'],
    ['a script element', '<script>alert(1)</script>', '&lt;script&gt;alert(1)&lt;/script&gt;'],
    ['an element with a handler', '<img src=x onerror=alert(1)>', '&lt;img src=x onerror=alert(1)&gt;'],
    ['a double quote closing an attribute', '" onmouseover="x', '&quot; onmouseover=&quot;x'],
    ['a single quote', "o'brien", 'o&#39;brien'],
    ['an ampersand (no double escaping of what looks like a reference)', 'a&b &amp; &#60;', 'a&amp;b &amp;amp; &amp;#60;'],
    ['a right-to-left override', 'gnp\u202e.exe', 'gnp\\u202e.exe'],
    ['a first-strong isolate and a pop', 'a\u2068b\u2069', 'a\\u2068b\\u2069'],
    ['ESC and a newline', 'x\u001b[31m\ny', 'x\\u001b[31m\\u000ay'],
    ['a line separator and a C1 CSI', 'a\u2028b\u009bc', 'a\\u2028b\\u009bc'],
    ['NUL', 'a\u0000b', 'a\\u0000b'],
    ['text outside the BMP is kept', 'ключ 🔑', 'ключ 🔑'],
  ])('%s', (_name, input, expected) => {
    expect(escapeHtml(input)).toBe(expected);
  });

  it('leaves no markup character and no control, whatever the text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        const out = escapeHtml(text);
        expect(out).not.toMatch(/[<>"']/);
        // Every & starts one of the references it writes.
        expect(out.replace(/&(amp|lt|gt|quot|#39);/g, '')).not.toContain('&');
        // eslint-disable-next-line no-control-regex -- the point
        expect(out).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
      }),
    );
  });
});
