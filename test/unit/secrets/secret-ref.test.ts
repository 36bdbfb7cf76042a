import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { refOf, resolveSecretRef, resolveWrittenSecret, trimOneNewline, type SecretContext } from '../../../src/secrets/secret-ref.js';


const baseDir = resolve('secret-ref-base');
const files: Record<string, string> = { [resolve(baseDir, 'pw')]: 'from-file\n', [resolve(baseDir, 'blank')]: '\n' };
const ctx: SecretContext = {
  env: { SET: 'from-env', EMPTY: '' },
  baseDir,
  readSecretFile: (p) => files[p] ?? Object.assign(new Error(`ENOENT: no such file, open '${p}'`), { code: 'ENOENT' }),
};

describe('secret references resolve to Secrets, or say why not without the value', () => {
  it('{env: NAME} must be set and non-empty', () => {
    const ok = resolveWrittenSecret({ env: 'SET' }, ctx);
    expect(ok.ok && ok.secret.reveal()).toBe('from-env');
    expect(resolveWrittenSecret({ env: 'UNSET' }, ctx)).toMatchObject({ ok: false, code: 'secret_env_unset', message: 'environment variable UNSET is not set' });
    expect(resolveWrittenSecret({ env: 'EMPTY' }, ctx)).toMatchObject({ ok: false, code: 'secret_env_empty' });
  });

  it('{file: PATH} is relative to baseDir; one trailing newline is trimmed', () => {
    const ok = resolveWrittenSecret({ file: 'pw' }, ctx);
    expect(ok.ok && ok.secret.reveal()).toBe('from-file');
    expect(ok.ok && ok.ref).toEqual({ kind: 'file', path: resolve(baseDir, 'pw') });
  });

  it('an empty or unreadable file is an error that names the path as written, not the absolute one', () => {
    expect(resolveWrittenSecret({ file: 'blank' }, ctx)).toMatchObject({ ok: false, code: 'secret_file_empty', message: "secret file 'blank' is empty" });
    const missing = resolveWrittenSecret({ file: 'missing' }, ctx);
    expect(missing).toMatchObject({ ok: false, code: 'secret_file_unreadable', message: "cannot read secret file 'missing': no such file" });
  });

  it('a literal is accepted with the plaintext warning; an empty one is an error', () => {
    const literal = resolveWrittenSecret('hunter2', ctx);
    expect(literal).toMatchObject({ ok: true, ref: { kind: 'literal' }, warning: { code: 'plaintext_password' } });
    expect(literal.ok && literal.warning?.message).toContain('plaintext password in the desired-state file');
    expect(resolveWrittenSecret('', ctx)).toMatchObject({ ok: false, code: 'empty_password' });
  });

  it('a saved reference re-resolves (apply of a saved plan); a literal one cannot', () => {
    const ref = refOf({ file: 'pw' }, baseDir);
    const again = resolveSecretRef(ref, ctx);
    expect(again.ok && again.secret.reveal()).toBe('from-file');
    expect(resolveSecretRef({ kind: 'literal' }, ctx)).toMatchObject({ ok: false, code: 'secret_literal_unavailable' });
  });

  it('trims exactly one trailing newline, LF or CRLF', () => {
    expect(trimOneNewline('a\n')).toBe('a');
    expect(trimOneNewline('a\r\n')).toBe('a');
    expect(trimOneNewline('a\n\n')).toBe('a\n');
    expect(trimOneNewline('a')).toBe('a');
    expect(trimOneNewline(' a ')).toBe(' a ');
  });
});
