import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { registerSecret, scrub, scrubbedExcerpt } from '../../../src/secrets/known-secrets.js';
import { Secret } from '../../../src/secrets/secret.js';
import { everyEncoding } from '../../helpers/encodings.js';


/** Canaries with a quote, a backslash, non-ASCII (BMP and astral) and whitespace. */
const canaries = ['q"u\\oé', 'tab\there "x" \\\\y ü€😀', '  spaces around / and+plus  ', 'pct%41&amp;<b>'];
for (const canary of canaries) registerSecret(canary);

describe('every known secret is removed from text in every form a server writes it', () => {
  for (const canary of canaries) {
    for (const [name, form] of Object.entries(everyEncoding(canary))) {
      it(`${JSON.stringify(canary)} ${name}`, () => {
        const out = scrub(`before ${form} after`);
        expect(out).not.toContain(form);
        expect(out).toContain('[redacted]');
        expect(out.startsWith('before ')).toBe(true);
        expect(out.endsWith(' after')).toBe(true);
      });
    }
  }

  it('a value made into a Secret is known from then on (bearer, refresh and access tokens, passwords, apikey tokens)', () => {
    const value = 'refresh-7d1e-"rotated"';
    expect(scrub(`got ${JSON.stringify(value)}`)).toContain(value.slice(0, 10));
    new Secret(value);
    expect(scrub(`got ${JSON.stringify(value)}`)).toBe('got "[redacted]"');
  });

  it('hex escapes in either case, mixed within one value', () => {
    expect(scrub('q\\"u\\\\o\\u00E9 and q\\u0022u\\u005co\\u00e9 and \\x71"u\\x5co\\xe9')).toBe('[redacted] and [redacted] and [redacted]');
  });

  it('Latin-1 percent bytes and numeric HTML references, as older servers write them', () => {
    expect(scrub('q%22u%5Co%E9 and q&#34;u&#x5C;o&#xE9; and q&quot;u\\o&#233;')).toBe('[redacted] and [redacted] and [redacted]');
  });

  it('leaves text that only resembles a secret alone', () => {
    const text = 'q"u\\o (no accent), q\\"u, %C3%A9, &quot;, a\\b+c';
    expect(scrub(text)).toBe(text);
  });

  it('a trimmed or Unicode-normalised echo is removed too', () => {
    expect(scrub('[spaces around / and+plus]')).toBe('[[redacted]]');
    expect(scrub(`x ${'q"u\\oé'.normalize('NFD')} y`)).toBe('x [redacted] y');
  });

  it('an arbitrary secret in an arbitrary encoding never survives', () => {
    const names = Object.keys(everyEncoding('x'));
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', minLength: 4, maxLength: 24 }), fc.constantFrom(...names), (secret, name) => {
        fc.pre(secret.length >= 4);
        registerSecret(secret);
        const form = everyEncoding(secret)[name]!;
        const out = scrub(`<${form}>`);
        expect(out).not.toContain(form);
      }),
      { numRuns: 300 },
    );
  });
});

describe('a secret straddling a cut leaves no prefix behind', () => {
  const secret = 'straddle-Ω-"secret"-value';
  registerSecret(secret);

  for (const [name, form] of Object.entries(everyEncoding(secret))) {
    it(`an excerpt cut inside the ${name} form`, () => {
      for (let offset = 1; offset < Math.min(form.length, 40); offset += 1) {
        const text = `${'x'.repeat(40 - offset)}${form}${'y'.repeat(200)}`;
        const out = scrubbedExcerpt(text, 40);
        expect(out).not.toContain(form.slice(0, 6));
        expect(out.endsWith('…')).toBe(true);
      }
    });
  }

  it('a long text is read in pieces; a secret across a piece boundary is removed whole', () => {
    for (const form of Object.values(everyEncoding(secret))) {
      for (const at of [32 * 1024 - 3, 32 * 1024 - form.length + 1, 64 * 1024 - 1]) {
        const text = `${'a'.repeat(at)}${form}${'b'.repeat(70 * 1024)}`;
        const out = scrub(text);
        expect(out.includes(form.slice(0, 8))).toBe(false);
        // The twice-escaped form carries its inner quotes (\\"): they stay, the value goes.
        expect(out.replace(/\\"/g, '') === `${'a'.repeat(at)}[redacted]${'b'.repeat(70 * 1024)}`).toBe(true);
      }
    }
  });

  it('a huge body is not read past the excerpt and its margin', () => {
    const out = scrubbedExcerpt(`${secret}${'z'.repeat(5_000_000)}`, 30);
    expect(out).toBe(`[redacted]${'z'.repeat(20)}…`);
  });
});
