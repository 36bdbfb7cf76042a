import { isAbsolute, resolve } from 'node:path';
import type { Diagnostic } from '../model/index.js';
import { diagnosticCodes } from '../model/index.js';
import { Secret } from '../secrets/index.js';
import { describeValue, didYouMean, formatPath, issuesToDiagnostics, limits, PositionsNeeded, quote, readPlainYaml, readYaml, sortDiagnostics, type DocPath, type Issue, type IssueWording, type YamlSource } from '../yaml/index.js';
import type { Target, TargetCredentials } from './target.js';
import { targetsFileSchema, type TargetsFileValue } from './targets-schema.js';

export interface ParseTargetsContext {
  /** The file as the user gave it; every position names it. */
  readonly file: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Folder relative paths start from. */
  readonly baseDir: string;
  /** Whether `absPath` is a regular file this process can open; an Error says why not. Never throws. */
  readonly checkFile: (absPath: string) => true | Error;
  /**
   * `require` (plan, sync, apply, export, daemon): an unset variable or a missing file is an
   * error. `warn` (validate, which must pass in a CI job without secrets): a warning, and that
   * target has no credentials. @default 'require'
   */
  readonly secrets?: 'require' | 'warn';
  /**
   * `validate --targets`: whether a target's `caFile` can be used (an Error says why not);
   * absent, it is checked when that target's client is made. A CA file is no secret: always an error.
   */
  readonly checkCaFile?: (absPath: string) => true | Error;
}

export interface ParseTargetsResult {
  /** Set when there are no errors. */
  readonly value?: readonly Target[];
  readonly errors: readonly Diagnostic[];
  readonly warnings: readonly Diagnostic[];
}

const credentialKeys = ['token', 'integratorKey'] as const;
const credentialForms = '{ env: NAME } or { file: PATH }';
/** An integrator key may also be in a Kubernetes Secret, which a rotated key is written back to. */
const keyForms = '{ env: NAME }, { file: PATH } or { secret: NAMESPACE/NAME[/KEY] }';

/**
 * Text of a targets file -> its targets, or every error found with `file:line:col`. Pure apart
 * from `ctx.checkFile`. Credentials are references: a literal is an error whose message never
 * shows it, and the value of `{ env: NAME }` is read here into a Secret (so it is scrubbed
 * from all output from now on).
 */
export function parseTargets(text: string, ctx: ParseTargetsContext): ParseTargetsResult {
  // Fast path, as for the desired file: a plain file with nothing to report is read without a
  // syntax tree (500 targets: ~5 ms instead of ~300). Anything else is read again with every position.
  const plain = readPlainYaml(text, ctx.file);
  if (plain) {
    try {
      const result = fromSource(plain, [], ctx);
      if (result.value && result.errors.length === 0 && result.warnings.length === 0) return result;
    } catch (error) {
      if (!(error instanceof PositionsNeeded)) throw error;
    }
  }
  const read = readYaml(text, ctx.file);
  if (!read.source) return { errors: read.errors, warnings: read.warnings };
  return fromSource(read.source, read.warnings, ctx);
}

function fromSource(source: YamlSource, yamlWarnings: readonly Diagnostic[], ctx: ParseTargetsContext): ParseTargetsResult {
  const raw = source.value === null ? {} : source.value;
  const diagnostics: Diagnostic[] = [...yamlWarnings];
  const parsed = targetsFileSchema.safeParse(raw);
  if (!parsed.success) diagnostics.push(...issuesToDiagnostics(parsed.error.issues, source, wording(source)));
  diagnostics.push(...crossChecks(raw, source));
  const credentials = parsed.success ? resolveCredentials(parsed.data, source, ctx, diagnostics) : [];
  if (parsed.success) diagnostics.push(...caFileFindings(parsed.data, source, ctx));
  const sorted = sortDiagnostics(diagnostics);
  const errors = sorted.filter((d) => d.severity === 'error').slice(0, limits.maxDiagnostics);
  const warnings = sorted.filter((d) => d.severity === 'warning').slice(0, limits.maxDiagnostics);
  if (!parsed.success || errors.length > 0) return { errors, warnings };
  const targets = parsed.data.targets.map(
    (t, i): Target => ({
      name: t.name,
      url: t.url,
      labels: { ...(t.labels ?? {}) },
      credentials: credentials[i],
      overrides: {
        ...(t.rate === undefined ? {} : { rate: t.rate }),
        ...(t.concurrency === undefined ? {} : { concurrency: t.concurrency }),
        ...(t.caFile === undefined ? {} : { caFile: absolute(t.caFile, ctx.baseDir) }),
        ...(t.pageSize === undefined ? {} : { pageSize: t.pageSize }),
      },
      source: source.locate(['targets', i]),
      ...(t.mode === 'observe' ? { mode: 'observe' as const } : {}),
    }),
  );
  return { value: targets, errors, warnings };
}

function absolute(path: string, baseDir: string): string {
  return isAbsolute(path) ? path : resolve(baseDir, path);
}

/** Same service whatever the case of the host, a default port or trailing slashes. */
export function normaliseServiceUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.pathname = parsed.pathname.replace(/\/+$/, '');
    return parsed.href.replace(/\/+$/, '');
  } catch {
    return url;
  }
}

/** Unique names and URLs, and exactly one credential per target: checked on the raw document. */
function crossChecks(raw: unknown, source: YamlSource): Diagnostic[] {
  const out: Diagnostic[] = [];
  const list = asRecord(raw)?.targets;
  if (!Array.isArray(list)) return out;
  const make = (code: string, message: string, path: DocPath, at: 'value' | 'key' = 'value'): Diagnostic => ({ severity: 'error', code, message, path: formatPath(path), position: source.locate(path, at) });
  const byName = new Map<string, number>();
  const byUrl = new Map<string, number>();
  const byKeySecret = new Map<string, number>();
  list.forEach((item, i) => {
    const t = asRecord(item);
    if (!t) return;
    if (typeof t.name === 'string') {
      const first = byName.get(t.name);
      if (first === undefined) byName.set(t.name, i);
      else out.push(make(diagnosticCodes.duplicateTarget, `target ${quote(t.name)} is declared twice (first as targets[${first}], line ${source.locate(['targets', first]).line}); names are unique`, ['targets', i, 'name']));
    }
    if (typeof t.url === 'string') {
      const url = normaliseServiceUrl(t.url);
      const first = byUrl.get(url);
      if (first === undefined) byUrl.set(url, i);
      else {
        out.push(
          make(
            diagnosticCodes.duplicateTarget,
            `${t.url} is also the URL of targets[${first}] (line ${source.locate(['targets', first]).line}): two targets on one service would be two writers at once; declare it once`,
            ['targets', i, 'url'],
          ),
        );
      }
    }
    const keySecret = secretRefOf(t.integratorKey);
    if (keySecret !== undefined) {
      const first = byKeySecret.get(keySecret);
      if (first === undefined) byKeySecret.set(keySecret, i);
      else {
        // Each service rotates its own key: one data key for two would hand one service's key to the other.
        const message = `the integrator key ${keySecret} is also that of targets[${first}] (line ${source.locate(['targets', first]).line}): each target's key needs a data key of its own`;
        out.push(make(diagnosticCodes.targetCredential, message, ['targets', i, 'integratorKey', 'secret']));
      }
    }
    const given = credentialKeys.filter((k) => t[k] !== undefined);
    if (given.length === 0) {
      out.push(make(diagnosticCodes.targetCredential, `target needs a credential: token: ${credentialForms}, or integratorKey: ${keyForms}`, ['targets', i]));
    } else if (given.length > 1) {
      out.push(make(diagnosticCodes.targetCredential, 'give either token or integratorKey, not both (the integrator key renews access tokens by itself)', ['targets', i, 'integratorKey'], 'key'));
    }
  });
  return out;
}

function resolveCredentials(file: TargetsFileValue, source: YamlSource, ctx: ParseTargetsContext, out: Diagnostic[]): (TargetCredentials | undefined)[] {
  const severity = (ctx.secrets ?? 'require') === 'require' ? 'error' : 'warning';
  return file.targets.map((t, i) => {
    const key = t.token !== undefined ? 'token' : 'integratorKey';
    const ref = t.token ?? t.integratorKey;
    if (ref === undefined || (t.token !== undefined && t.integratorKey !== undefined)) return undefined;
    const path: DocPath = ['targets', i, key];
    const complain = (message: string): undefined => {
      out.push({ severity, code: diagnosticCodes.targetCredential, message, path: formatPath(path), position: source.locate(path) });
      return undefined;
    };
    // The Secret is read at the first exchange (a validate needs no cluster); its errors name it then.
    if ('secret' in ref) return { kind: 'integratorKeySecret', integratorKeySecret: ref.secret };
    if ('env' in ref) {
      const value = ctx.env[ref.env];
      if (value === undefined) return complain(`environment variable ${ref.env} is not set (the ${key === 'token' ? 'access token' : 'integrator key'} of target ${quote(t.name)})`);
      if (value.trim() === '') return complain(`environment variable ${ref.env} is empty (the ${key === 'token' ? 'access token' : 'integrator key'} of target ${quote(t.name)})`);
      const secret = new Secret(value.trim());
      return key === 'token' ? { kind: 'token', token: secret } : { kind: 'integratorKey', refreshToken: secret };
    }
    const abs = absolute(ref.file, ctx.baseDir);
    const ok = ctx.checkFile(abs);
    if (ok !== true) return complain(`cannot read ${ref.file} (the ${key === 'token' ? 'token file' : 'integrator key file'} of target ${quote(t.name)}): ${ok.message}`);
    return key === 'token' ? { kind: 'tokenFile', tokenFile: abs } : { kind: 'integratorKeyFile', refreshTokenFile: abs };
  });
}

/** Each target's `caFile` that cannot be used, at its key's value (validate only). */
function caFileFindings(file: TargetsFileValue, source: YamlSource, ctx: ParseTargetsContext): Diagnostic[] {
  const check = ctx.checkCaFile;
  if (check === undefined) return [];
  return file.targets.flatMap((t, i): Diagnostic[] => {
    if (t.caFile === undefined) return [];
    const ok = check(absolute(t.caFile, ctx.baseDir));
    if (ok === true) return [];
    const path: DocPath = ['targets', i, 'caFile'];
    return [{ severity: 'error', code: diagnosticCodes.targetCaFile, message: `the CA file ${t.caFile} (caFile of target ${quote(t.name)}) ${ok.message}`, path: formatPath(path), position: source.locate(path) }];
  });
}

/** `{ secret: NS/NAME[/KEY] }` as NS/NAME/KEY (the data key's default spelled out), else undefined. */
function secretRefOf(ref: unknown): string | undefined {
  const secret = asRecord(ref)?.secret;
  if (typeof secret !== 'string') return undefined;
  const parts = secret.split('/');
  return parts.length === 2 ? `${secret}/integrator-key` : secret;
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** A credential is never printed, whatever was written there. */
function isSensitive(path: DocPath): boolean {
  return path.some((p) => p === 'token' || p === 'integratorKey');
}

function unknownKeyHint(parent: DocPath, key: string): string | undefined {
  if (parent.length !== 2 || parent[0] !== 'targets') {
    if (parent.length === 0 && (key === 'services' || key === 'fleet')) return "the list is under 'targets'";
    return undefined;
  }
  if (key === 'tokenFile') return 'a token file is token: { file: PATH }';
  if (key === 'refreshToken' || key === 'refreshTokenFile' || key === 'key') return `an integrator key is integratorKey: ${keyForms}`;
  if (key === 'password' || key === 'secret') return `a target logs in with token: ${credentialForms}, or integratorKey: ${keyForms}`;
  if (key === 'maxDeletes' || key === 'prune') return 'guards apply to every target alike: set them on the command line or in the settings';
  return undefined;
}

/** A literal credential, or a reference of the wrong shape: said without showing the value. */
function explainCredential(source: YamlSource) {
  return (issue: Issue, path: DocPath, value: unknown, describe: (issue: Issue) => Diagnostic[]): Diagnostic[] | undefined => {
    const last = path[path.length - 1];
    if (issue.code !== 'invalid_union' || (last !== 'token' && last !== 'integratorKey')) return undefined;
    const make = (code: string, message: string, at: DocPath = path, target: 'value' | 'key' = 'value'): Diagnostic[] => [
      { severity: 'error', code, message, path: formatPath(at), position: source.locate(at, target) },
    ];
    if (typeof value === 'string') {
      return make(diagnosticCodes.targetCredential, `a credential is never written in the targets file: reference it with ${credentialForms} (the value was not shown)`);
    }
    const record = asRecord(value);
    if (!record) return make(diagnosticCodes.invalidType, `expected ${credentialForms}; got ${describeValue(value, false)}`);
    const keys = Object.keys(record);
    const unknown = keys.filter((k) => k !== 'env' && k !== 'file');
    if (unknown.length > 0) return unknown.flatMap((k) => make(diagnosticCodes.unknownKey, `unknown key ${quote(k)} in a credential reference${didYouMean(k, ['env', 'file']) || ` (use ${credentialForms})`}`, [...path, k], 'key'));
    if (keys.length === 0) return make(diagnosticCodes.invalidType, `expected ${credentialForms}; got an empty mapping`);
    if (keys.length > 1) return make(diagnosticCodes.invalidValue, 'a credential reference takes either env or file, not both');
    const inner = issue.errors[keys[0] === 'env' ? 0 : 1] ?? [];
    return inner.flatMap((sub) => describe({ ...sub, path: [...path, ...sub.path] } as Issue));
  };
}

function wording(source: YamlSource): IssueWording {
  return {
    schema: targetsFileSchema,
    rootWhat: 'the targets file must be a mapping with the key targets (a list of services)',
    isSensitive,
    unknownKeyHint,
    explain: explainCredential(source),
  };
}
