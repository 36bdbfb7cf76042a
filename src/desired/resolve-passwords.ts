import type { SecretRef, Diagnostic } from '../model/index.js';
import type { Secret } from '../secrets/index.js';
import { envNamePattern, refOf, resolveWrittenSecret, secretCodes, type SecretContext, type WrittenSecret } from '../secrets/index.js';
import { asList, asRecord } from './check-desired.js';
import { formatPath, limits } from '../yaml/index.js';
import type { YamlSource } from '../yaml/index.js';

export interface ResolvedPassword {
  readonly secret: Secret;
  readonly ref: SecretRef;
}

/** A password `--secrets optional` plans without: where it comes from, never its value. */
export interface UnavailablePassword {
  readonly ref: SecretRef;
  /** As written: `env NAME` or `file PATH`. */
  readonly shown: string;
}

/**
 * What a password that cannot be read here means: `require` (plan, sync, apply, daemon) an
 * error; `warn` (validate) a warning; `optional` (`plan --secrets optional`) nothing per item:
 * the item keeps its reference and the plan says, once, what it could not check.
 */
export type MissingSecrets = 'require' | 'warn' | 'optional';

/**
 * Resolves every SSH user's password reference, by item index. Runs on the raw document, so
 * an unset variable is reported together with any schema error. Items with `ensure: absent`
 * are skipped: they are deleted, so their secrets need not exist.
 */
export function resolvePasswords(
  raw: unknown,
  source: YamlSource,
  ctx: SecretContext,
  missing: MissingSecrets = 'require',
): { passwords: Map<number, ResolvedPassword>; unavailable: Map<number, UnavailablePassword>; diagnostics: Diagnostic[] } {
  const passwords = new Map<number, ResolvedPassword>();
  const unavailableByItem = new Map<number, UnavailablePassword>();
  const diagnostics: Diagnostic[] = [];
  asList(asRecord(raw)?.sshUsers).forEach((rawItem, i) => {
    const item = asRecord(rawItem);
    if (!item || item.ensure === 'absent' || diagnostics.length >= limits.maxDiagnostics) return;
    const written = writtenSecret(item.password);
    if (written === undefined) return;
    const path = ['sshUsers', i, 'password'];
    const result = resolveWrittenSecret(written, ctx);
    if (!result.ok && missing === 'optional' && unavailable.has(result.code) && typeof written !== 'string') {
      unavailableByItem.set(i, { ref: refOf(written, ctx.baseDir), shown: 'env' in written ? `env ${written.env}` : `file ${written.file}` });
      return;
    }
    if (!result.ok) {
      const soft = missing === 'warn' && unavailable.has(result.code);
      diagnostics.push({
        severity: soft ? 'warning' : 'error',
        code: result.code,
        message: soft ? `${result.message}; plan and sync refuse to run without it` : result.message,
        path: formatPath(path),
        position: source.locate(path),
      });
      return;
    }
    if (result.warning) {
      diagnostics.push({ severity: 'warning', code: result.warning.code, message: result.warning.message, path: formatPath(path), position: source.locate(path) });
    }
    passwords.set(i, { secret: result.secret, ref: result.ref });
  });
  return { passwords, unavailable: unavailableByItem, diagnostics };
}

/** Secrets that are absent here but may exist where amsync syncs (a CI job without them). */
const unavailable: ReadonlySet<string> = new Set([secretCodes.secretEnvUnset, secretCodes.secretEnvEmpty, secretCodes.secretFileUnreadable, secretCodes.secretFileEmpty]);

/** The password as written, when its shape is one of the three forms (the schema reports the rest). */
function writtenSecret(value: unknown): WrittenSecret | undefined {
  if (typeof value === 'string') return value;
  const record = asRecord(value);
  if (!record) return undefined;
  const keys = Object.keys(record);
  if (keys.length !== 1) return undefined;
  if (typeof record.env === 'string' && envNamePattern.test(record.env)) return { env: record.env };
  if (typeof record.file === 'string' && record.file !== '') return { file: record.file };
  return undefined;
}
