import { dirname, isAbsolute, join } from 'node:path';
import type { Diagnostic } from '../model/index.js';
import type { DocPath } from '../yaml/index.js';
import { sortDiagnostics, readYaml, issuesToDiagnostics } from '../yaml/index.js';
import { settingsFileSchema, type SettingsLayer } from './settings-schema.js';

export interface ParseSettingsResult {
  readonly value?: SettingsLayer;
  readonly errors: readonly Diagnostic[];
  readonly warnings: readonly Diagnostic[];
}

function unknownKeyHint(parent: DocPath, key: string): string | undefined {
  if (parent.length === 0 && (key === 'token' || key === 'apiToken')) {
    return 'a token never goes in a settings file; set AMSYNC_TOKEN, or point tokenFile at a file holding it';
  }
  if (parent.length === 0 && (key === 'refreshToken' || key === 'integratorKey')) {
    return 'an integrator key never goes in a settings file; set AMSYNC_REFRESH_TOKEN, or point refreshTokenFile at a file holding it';
  }
  if (parent.length === 3 && parent[0] === 'notify' && parent[1] === 'webhooks' && ['secret', 'key', 'hmacKey', 'signingKey'].includes(key)) {
    return 'a webhook key never goes in a settings file; name the environment variable holding it with secretEnv, or a file with secretFile';
  }
  return undefined;
}

/**
 * Text of a settings file -> one settings layer, with the same positioned errors as the
 * desired-state file. Pure. Relative paths in it are made relative to the file's folder, so
 * a settings file means the same from any working directory.
 */
export function parseSettings(text: string, file: string): ParseSettingsResult {
  const read = readYaml(text, file);
  if (!read.source) return { errors: read.errors, warnings: read.warnings };
  const source = read.source;
  const raw = source.value === null ? {} : source.value;
  const parsed = settingsFileSchema().safeParse(raw);
  if (!parsed.success) {
    const errors = issuesToDiagnostics(parsed.error.issues, source, {
      schema: settingsFileSchema(),
      rootWhat: 'a settings file must be a mapping of setting names to values',
      isSensitive: () => false,
      unknownKeyHint,
    });
    return { errors: sortDiagnostics(errors), warnings: read.warnings };
  }
  return { value: relativeTo(dirname(file), parsed.data), errors: [], warnings: read.warnings };
}

function relativeTo(folder: string, layer: SettingsLayer): SettingsLayer {
  const fix = <T extends string | null | undefined>(p: T): T => (typeof p === 'string' && !isAbsolute(p) ? (join(folder, p) as T) : p);
  return {
    ...layer,
    tokenFile: fix(layer.tokenFile),
    refreshTokenFile: fix(layer.refreshTokenFile),
    stateFile: fix(layer.stateFile),
    tokensDir: fix(layer.tokensDir),
    auditLog: fix(layer.auditLog),
    ...(layer.http ? { http: { ...layer.http, caFile: fix(layer.http.caFile) } } : {}),
    ...(layer.daemon ? { daemon: { ...layer.daemon, approvalsFile: fix(layer.daemon.approvalsFile), socket: fix(layer.daemon.socket) } } : {}),
    ...(layer.notify?.webhooks ? { notify: { ...layer.notify, webhooks: layer.notify.webhooks.map((w) => (w.secretFile === undefined ? w : { ...w, secretFile: fix(w.secretFile) })) } } : {}),
  };
}
