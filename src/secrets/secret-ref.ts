import { isAbsolute, resolve } from 'node:path';
import type { SecretRef } from '../model/index.js';
import { secretCodes } from '../model/index.js';
import { Secret } from './secret.js';

/** Names an environment variable may have in `{env: NAME}`. */
export const envNamePattern = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A password as written in the desired-state file, after its shape was checked. */
export type WrittenSecret = { readonly env: string } | { readonly file: string } | string;

export { secretCodes };

export type SecretCode = (typeof secretCodes)[keyof typeof secretCodes];

/** Everything resolving needs from outside, passed in so resolving stays testable. */
export interface SecretContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Folder that relative `{file: PATH}` references start from: the desired file's folder. */
  readonly baseDir: string;
  /** Reads a secret file (absolute path); an Error when it cannot. Never throws. */
  readonly readSecretFile: (absPath: string) => string | Error;
}

export type Resolution =
  | { readonly ok: true; readonly secret: Secret; readonly ref: SecretRef; readonly warning?: { readonly code: SecretCode; readonly message: string } }
  | { readonly ok: false; readonly code: SecretCode; readonly message: string };

/** The model's reference for what was written; file paths become absolute. */
export function refOf(written: WrittenSecret, baseDir: string): SecretRef {
  if (typeof written === 'string') return { kind: 'literal' };
  if ('env' in written) return { kind: 'env', name: written.env };
  return { kind: 'file', path: isAbsolute(written.file) ? written.file : resolve(baseDir, written.file) };
}

/**
 * Resolves a written password to a Secret. Messages name the variable or file, never the
 * value: they end up in logs and CI output.
 */
export function resolveWrittenSecret(written: WrittenSecret, ctx: SecretContext): Resolution {
  if (typeof written === 'string') {
    if (written.length === 0) return { ok: false, code: secretCodes.emptyPassword, message: 'password is empty' };
    return {
      ok: true,
      secret: new Secret(written),
      ref: { kind: 'literal' },
      warning: {
        code: secretCodes.plaintextPassword,
        message: 'plaintext password in the desired-state file; reference it with {env: NAME} or {file: PATH} instead',
      },
    };
  }
  const ref = refOf(written, ctx.baseDir);
  const shown = 'file' in written ? written.file : '';
  return resolveSecretRef(ref, ctx, shown);
}

/**
 * Resolves a model reference (also used to re-read a saved plan's references at apply time).
 * `shownPath` is the path as the user wrote it, for messages.
 */
export function resolveSecretRef(ref: SecretRef, ctx: Pick<SecretContext, 'env' | 'readSecretFile'>, shownPath?: string): Resolution {
  switch (ref.kind) {
    case 'literal':
      return { ok: false, code: secretCodes.secretLiteralUnavailable, message: 'a literal password is not kept outside the desired-state file; read the file again' };
    case 'env': {
      const value = ctx.env[ref.name];
      if (value === undefined) return { ok: false, code: secretCodes.secretEnvUnset, message: `environment variable ${ref.name} is not set` };
      if (value === '') return { ok: false, code: secretCodes.secretEnvEmpty, message: `environment variable ${ref.name} is empty` };
      return { ok: true, secret: new Secret(value), ref };
    }
    case 'file': {
      const shown = `'${shownPath ?? ref.path}'`;
      const read = ctx.readSecretFile(ref.path);
      if (read instanceof Error) {
        return { ok: false, code: secretCodes.secretFileUnreadable, message: `cannot read secret file ${shown}: ${readFailure(read)}` };
      }
      const value = trimOneNewline(read);
      if (value === '') return { ok: false, code: secretCodes.secretFileEmpty, message: `secret file ${shown} is empty` };
      return { ok: true, secret: new Secret(value), ref };
    }
  }
}

/** Files end with a newline by convention; the password does not. Only one is removed. */
export function trimOneNewline(text: string): string {
  if (text.endsWith('\r\n')) return text.slice(0, -2);
  if (text.endsWith('\n')) return text.slice(0, -1);
  return text;
}

/** Words for a file-system error, without the absolute path Node puts in its messages. */
function readFailure(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT':
      return 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a directory';
    case 'ENOTDIR':
      return 'a part of the path is not a directory';
    default:
      return code === undefined ? error.message : `${code.toLowerCase()} error`;
  }
}
