import { describe, expect, it } from 'vitest';
import { decodeText } from '../../../src/yaml/decode.js';
import { limits } from '../../../src/yaml/limits.js';
import { parse } from '../desired/parse-helper.js';

/** Runs `fn` and fails if it took longer than `ms`: hostile input must not hang us. */
// No wall-clock bound in these tests (a busy machine is not a defect): a hang or a quadratic
// blow-up on these inputs shows as the test's own timeout instead.

function onlyError(text: string) {
  const result = parse(text);
  expect(result.value).toBeUndefined();
  expect(result.errors).toHaveLength(1);
  return result.errors[0]!;
}

describe('hostile input gets a clear error, never a crash or a hang', () => {
  it('a file over 10 MB is refused before it is parsed', () => {
    const text = `sshUsers:\n${'  - username: x\n'.repeat(Math.ceil(limits.maxFileBytes / 16) + 10)}`;
    const d = onlyError(text);
    expect(d.code).toBe('file_too_large');
    expect(d.message).toMatch(/the file is 10\.\d MB; amsync reads at most 10\.0 MB/);
  });

  it('the 10 MB bound counts UTF-8 bytes, not characters', () => {
    const text = `# ${'é'.repeat(limits.maxFileBytes / 2 + 10)}\n`;
    expect(text.length).toBeLessThan(limits.maxFileBytes);
    expect(onlyError(text).code).toBe('file_too_large');
  });

  it('a YAML alias bomb ("billion laughs") is stopped by the alias bound', () => {
    const text = [
      'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]',
      'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]',
      'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]',
      'd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]',
      'e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]',
      'f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]',
      'g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]',
      'sshUsers: [*g, *g, *g, *g, *g, *g, *g, *g, *g]',
      '',
    ].join('\n');
    const d = onlyError(text);
    expect(d.code).toBe('alias_limit');
    expect(d.message).toContain('alias bomb');
    expect(d.position).toEqual({ file: 'access.yaml', line: 2, col: 8 });
  });

  it('a long chain of aliases is stopped too', () => {
    const lines = ['a0: &a0 [x]'];
    for (let i = 1; i < 5000; i += 1) lines.push(`a${i}: &a${i} [*a${i - 1}]`);
    expect(onlyError(lines.join('\n')).code).toBe('alias_limit');
  });

  it('deeply nested flow collections', () => {
    const d = onlyError(`sshUsers: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`);
    expect(d.code).toBe('too_deep');
    expect(d.message).toContain('nested more than 32 levels');
    expect(d.position?.line).toBe(1);
  });

  it('deeply nested block collections', () => {
    expect(onlyError(`sshUsers:\n  ${'- '.repeat(50_000)}x\n`).code).toBe('too_deep');
  });

  it('deeply nested mappings', () => {
    const lines = Array.from({ length: 200 }, (_, i) => `${' '.repeat(i)}k${i}:`);
    expect(onlyError(`${lines.join('\n')} 1\n`).code).toBe('too_deep');
  });

  it('several YAML documents in one file', () => {
    const result = parse('sshUsers: []\n---\napikeys: []\n---\nprune: {}\n');
    expect(result.errors.map((d) => [d.code, d.position?.line])).toEqual([['multiple_documents', 3]]);
    expect(result.errors[0]!.message).toContain('3 YAML documents');
  });

  // The same at 200,000 keys, where a quadratic duplicate check would hang, is in the slow
  // project (test/slow/hostile-input-scale.test.ts: 4 to 20 s of one worker's CPU).
  it('a map of 2,000 distinct keys reports a bounded list', () => {
    const keys = Array.from({ length: 2_000 }, (_, i) => `k${i}: 1`).join('\n');
    const result = parse(keys);
    expect(result.errors).toHaveLength(limits.maxDiagnostics + 1);
    expect(result.errors.at(-1)!.code).toBe('too_many_problems');
  });

  it('binary content (a NUL byte) is named as such, with its position', () => {
    const d = onlyError('sshUsers:\n  - username: a\u0000\n');
    expect(d).toMatchObject({ code: 'binary_content', position: { line: 2, col: 16 } });
  });

  it('an empty file is valid: an empty desired state', () => {
    expect(parse('').errors).toEqual([]);
    expect(parse('').value?.sshUsers).toEqual([]);
  });
});

describe('bytes are checked before they are text', () => {
  const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))));

  it('UTF-8 decodes, and a byte-order mark is dropped', () => {
    expect(decodeText(bytes([0xef, 0xbb, 0xbf], 'sshUsers: []\n'), 'f.yaml')).toEqual({ text: 'sshUsers: []\n' });
  });

  it('Latin-1 is not UTF-8: the first bad byte is positioned', () => {
    const result = decodeText(bytes('sshUsers:\n  - username: j', [0xf6], 'rg\n'), 'f.yaml');
    expect(result.error).toMatchObject({ code: 'not_utf8', position: { file: 'f.yaml', line: 2, col: 16 } });
    expect(result.error!.message).toContain('byte 0xF6');
  });

  it('a column counts characters, not bytes', () => {
    const result = decodeText(bytes('# é ü\n# ', [0xff]), 'f.yaml');
    expect(result.error!.position).toEqual({ file: 'f.yaml', line: 2, col: 3 });
  });

  it('UTF-16 is recognised by its byte-order mark', () => {
    const result = decodeText(Buffer.from('\ufeffsshUsers: []\n', 'utf16le'), 'f.yaml');
    expect(result.error).toMatchObject({ code: 'not_utf8' });
    expect(result.error!.message).toContain('UTF-16');
  });

  it('a PNG is not UTF-8', () => {
    expect(decodeText(bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]), 'f.yaml').error?.code).toBe('not_utf8');
  });

  it('overlong encodings and surrogates are refused', () => {
    expect(decodeText(bytes([0xc0, 0xaf]), 'f.yaml').error?.code).toBe('not_utf8');
    expect(decodeText(bytes([0xed, 0xa0, 0x80]), 'f.yaml').error?.code).toBe('not_utf8');
  });

  it('more than 10 MB of bytes is refused without decoding', () => {
    expect(decodeText(new Uint8Array(limits.maxFileBytes + 1), 'f.yaml').error?.code).toBe('file_too_large');
  });
});
