import { describe, expect, it } from 'vitest';
import { bodyExcerpt, redactText } from '../../../src/api/redact.js';

describe('excerpts of response bodies never carry a secret', () => {
  it('blanks token and password values in JSON, at any depth', () => {
    const body = JSON.stringify({ items: [{ token: 'abc-secret-1', nested: { password: 'pw-secret-2', apiToken: 'x-secret-3' } }], ok: 1 });
    const excerpt = bodyExcerpt(body, [], 500);
    expect(excerpt).toBe('{"items":[{"token":"[redacted]","nested":{"password":"[redacted]","apiToken":"[redacted]"}}],"ok":1}');
  });

  it('blanks key/value pairs and bearer tokens in text that is not JSON, truncated ones included', () => {
    expect(redactText('{"token": "abc-secret-1", "password": "unterminated')).toBe('{"token": "[redacted]", "password": "[redacted]"');
    expect(redactText('password=hunter2&user=bob')).toBe('password="[redacted]"&user=bob');
    expect(redactText('Authorization: Bearer abc.def.ghi')).not.toContain('abc.def.ghi');
  });

  it('a pair whose value is a known secret reads the same as one whose value is not: no stray bracket', () => {
    expect(redactText('password=hunter2-known&user=bob', ['hunter2-known'])).toBe('password="[redacted]"&user=bob');
    expect(redactText('token: hunter2-known; next', ['hunter2-known'])).toBe('token: "[redacted]"; next');
    expect(bodyExcerpt('password=hunter2-known&user=bob', ['hunter2-known'])).toBe('password="[redacted]"&user=bob');
  });

  it('removes every known secret value wherever it appears', () => {
    expect(bodyExcerpt('<p>you sent s3cr3t-value twice: s3cr3t-value</p>', ['s3cr3t-value'])).toBe('<p>you sent [redacted] twice: [redacted]</p>');
  });

  it('redacts before cutting, so no prefix of a secret survives the cut', () => {
    const secret = 'abcdefghijklmnop';
    const excerpt = bodyExcerpt(`${'x'.repeat(30)}${secret}`, [secret], 36);
    expect(excerpt).not.toContain('abcdef');
    expect(excerpt.endsWith('…')).toBe(true);
  });

  it('keeps it on one line', () => {
    expect(bodyExcerpt('line one\nline two\r\n\tthree')).toBe('line one line two three');
    expect(bodyExcerpt('   ')).toBe('(empty body)');
  });

  it('ignores very short known values (they would garble the text)', () => {
    expect(redactText('a b c', ['b'])).toBe('a b c');
  });
});
