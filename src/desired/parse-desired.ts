import { dirname } from 'node:path';
import type { AccessPolicy, DesiredApikey, DesiredOrigin, DesiredSshUser, DesiredState, Ensure, GeneratedPassword, KeyRotation, KindDeclaration, PasswordClass, RoleNameRef, Diagnostic, SourcePosition } from '../model/index.js';
import { apikeyKind, fieldsOf, sshUserKind } from '../model/index.js';
import { checkDesired } from './check-desired.js';
import { checkGeneratedPasswords } from './check-generated.js';
import { checkTargets } from './check-targets.js';
import { toTargetSelector, type SelectableTarget } from './target-selector.js';
import { sortDiagnostics, limits, PositionsNeeded, readPlainYaml, readYaml, type YamlSource, issuesToDiagnostics } from '../yaml/index.js';
import { diagnosticCodes } from '../model/index.js';
import { desiredFileSchema, type DesiredFile, type FileItemOf, type PolicyInput } from './desired-schema.js';
import { desiredWording } from './desired-wording.js';
import { quickCheckDesired } from './quick-check.js';
import { durationMs } from './rotation-duration.js';
import { resolvePasswords, type MissingSecrets, type ResolvedPassword, type UnavailablePassword } from './resolve-passwords.js';

export interface ParseDesiredContext {
  /** The file's name as the user gave it; every position names it. */
  readonly file: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Reads a secret file by absolute path; an Error when it cannot. Never throws. */
  readonly readSecretFile: (absPath: string) => string | Error;
  /** Folder relative `{file: PATH}` references start from. @default dirname(file) */
  readonly baseDir?: string;
  /**
   * `require` (plan, sync, daemon): an unset variable or unreadable secret file is an error.
   * `warn` (validate, which must pass in a CI job that has no secrets): it is a warning, and
   * that user's password is left out of the value, which is then only fit for reporting.
   * `optional` (`plan --secrets optional`): no diagnostic; the user keeps its reference and
   * `passwordUnavailable`, and the plan says what it could not check.
   * @default 'require'
   */
  readonly secrets?: MissingSecrets;
  /**
   * Largest text read, in bytes. Only `amsync export` raises it, to check its own output
   * (which may be larger than a file amsync reads). @default limits.maxFileBytes
   */
  readonly maxBytes?: number;
  /**
   * The fleet `targets:` selects from (the targets file, `--targets`). Absent (no targets
   * file), a `targets:` key is an error: it would silently mean nothing (README, "Fleet: one access file, many services").
   */
  readonly targets?: readonly SelectableTarget[];
}

/** Where the file writes its `prune:`, `protect:` and `policy:` keys, those it has. */
export type Sections = Omit<DesiredOrigin, 'files'>;

export interface ParseDesiredResult {
  /** Set when there are no errors. */
  readonly value?: DesiredState;
  /** Set with the value. */
  readonly sections?: Sections;
  readonly warnings: readonly Diagnostic[];
  readonly errors: readonly Diagnostic[];
}

/**
 * Text of a desired-state file -> DesiredState, or every error found, positioned. Pure apart
 * from the reads `ctx` performs for secret files. An empty file is a valid, empty state.
 */
export function parseDesired(text: string, ctx: ParseDesiredContext): ParseDesiredResult {
  // Fast path: a plain file with nothing to report is read without a syntax tree (at 100k
  // items, readYaml alone takes ~650 MB and seconds). A file outside the plain subset, or with
  // any error or warning, is read again with every position, so diagnostics never change.
  const plain = readPlainYaml(text, ctx.file, ctx.maxBytes);
  if (plain) {
    const result = withoutPositions(() => fromSource(plain, [], ctx));
    if (result?.value && result.errors.length === 0 && result.warnings.length === 0) return result;
  }
  const read = readYaml(text, ctx.file, ctx.maxBytes);
  if (!read.source) return { errors: read.errors, warnings: read.warnings };
  return fromSource(read.source, read.warnings, ctx);
}

/** undefined when the source was asked for a position it does not keep. */
function withoutPositions(parse: () => ParseDesiredResult): ParseDesiredResult | undefined {
  try {
    return parse();
  } catch (error) {
    if (error instanceof PositionsNeeded) return undefined;
    throw error;
  }
}

function fromSource(source: YamlSource, yamlWarnings: readonly Diagnostic[], ctx: ParseDesiredContext): ParseDesiredResult {
  // An empty file (or one of comments only) declares nothing: a valid, empty desired state.
  const raw = source.value === null ? {} : source.value;

  // Most files are plainly right: checked without zod, to the same value (quick-check.ts).
  const quick = quickCheckDesired(raw);
  const parsed = quick === undefined ? desiredFileSchema().safeParse(raw) : ({ success: true, data: quick } as const);
  const diagnostics: Diagnostic[] = [...yamlWarnings];
  if (!parsed.success) diagnostics.push(...issuesToDiagnostics(parsed.error.issues, source, desiredWording(source)));
  diagnostics.push(...checkDesired(raw, source));
  diagnostics.push(...checkTargets(raw, source, ctx.targets));
  diagnostics.push(...checkGeneratedPasswords(raw, source));
  const { passwords, unavailable, diagnostics: secretDiagnostics } = resolvePasswords(raw, source, {
    env: ctx.env,
    baseDir: ctx.baseDir ?? dirname(ctx.file),
    readSecretFile: ctx.readSecretFile,
  }, ctx.secrets ?? 'require');
  diagnostics.push(...secretDiagnostics);

  const sorted = sortDiagnostics(diagnostics);
  const errors = capped(sorted.filter((d) => d.severity === 'error'));
  const warnings = capped(sorted.filter((d) => d.severity === 'warning'));
  if (errors.length > 0 || !parsed.success) return { errors, warnings };
  return { value: toModel(parsed.data, { passwords, unavailable }, source), sections: sectionsOf(source), errors, warnings };
}

// Most keys declare no roles: one shared empty list instead of one each (100k at 100k keys).
const noRoles: readonly number[] = Object.freeze([]);

/** The passwords of the SSH users, by item index: read, or (`--secrets optional`) not available. */
interface Passwords {
  readonly passwords: ReadonlyMap<number, ResolvedPassword>;
  readonly unavailable: ReadonlyMap<number, UnavailablePassword>;
}

function toModel(file: DesiredFile, passwords: Passwords, source: YamlSource): DesiredState {
  const sshUsers = (file.sshUsers ?? []).map((u, i) => toItem(sshUserKind, u, i, source, passwords, file.ignore?.sshUsers) as unknown as DesiredSshUser);
  const apikeys = (file.apikeys ?? []).map((k, i) => toItem(apikeyKind, k, i, source, passwords, file.ignore?.apikeys) as unknown as DesiredApikey);
  const prune = file.prune ?? { sshUsers: false, apikeys: false };
  const protect = file.protect ?? { sshUsers: [], apikeys: [] };
  const policy = file.policy ? policyOf(file.policy, source) : undefined;
  return {
    sshUsers,
    apikeys,
    prune: { sshUsers: prune.sshUsers, apikeys: prune.apikeys },
    protect: { sshUsers: [...(protect.sshUsers ?? [])], apikeys: [...(protect.apikeys ?? [])] },
    ...(policy ? { policy } : {}),
    ...(file.targets === undefined ? {} : { targets: toTargetSelector(file.targets) }),
  };
}

/**
 * A file item as the model's item, by its kind's declaration (model/kinds): the identity,
 * `id`, each field (role ids sorted and unique with the roles by name beside them; a secret
 * as its resolved value and reference), `ensure`, where it is written, `targets`.
 */
function toItem<K extends KindDeclaration>(
  kind: K,
  item: FileItemOf<K>,
  i: number,
  source: YamlSource,
  passwords: Passwords,
  ignoredByFile: readonly string[] | undefined,
): Record<string, unknown> {
  const values = item as unknown as Readonly<Record<string, unknown>> & Pick<FileItemOf<K>, 'renamedFrom' | 'ignore' | 'mode' | 'expires' | 'ttl'> & { readonly id?: number; readonly ensure: Ensure; readonly targets?: Parameters<typeof toTargetSelector>[0] };
  const out: Record<string, unknown> = {};
  for (const [name, field] of fieldsOf(kind)) {
    const value = values[name];
    if (field.type === 'roleIds') {
      const roles = value as readonly (number | string)[];
      const ids = roles.filter((r): r is number => typeof r === 'number');
      const roleNames = roleNamesOf(roles, (j) => source.locate([kind.list, i, name, j]));
      out[name] = ids.length === 0 ? noRoles : [...new Set(ids)].sort((a, b) => a - b);
      if (roleNames.length > 0) out.roleNames = roleNames;
    } else if (field.type === 'secret') {
      // Resolved by resolve-passwords.ts (by item index); an item to delete needs none.
      const secret = values.ensure === 'absent' ? undefined : passwords.passwords.get(i);
      const missing = values.ensure === 'absent' ? undefined : passwords.unavailable.get(i);
      const generate = generatedOf(value);
      if (generate && values.ensure !== 'absent') {
        out[`${name}Generated`] = generatedPassword(generate, (values as { rotate?: { every: string } }).rotate);
      } else if (secret) {
        out[name] = secret.secret;
        out[`${name}Ref`] = secret.ref;
      } else if (missing) {
        out[`${name}Ref`] = missing.ref;
        out[`${name}Unavailable`] = missing.shown;
      }
    } else {
      out[name] = value;
    }
    if (field.identity && values.id !== undefined) out.id = values.id;
  }
  out.ensure = values.ensure;
  out.source = source.locate([kind.list, i]);
  if (values.targets !== undefined) out.targets = toTargetSelector(values.targets);
  // Set only when written, so a state of a file without them is what it always was.
  if (values.renamedFrom !== undefined) out.renamedFrom = [...new Set(values.renamedFrom)];
  const ignore = [...new Set([...(ignoredByFile ?? []), ...(values.ignore ?? [])])];
  if (ignore.length > 0) out.ignore = ignore;
  if (values.mode !== undefined) out.mode = values.mode;
  if (values.expires !== undefined) out.expires = values.expires;
  if (values.ttl !== undefined) out.ttl = values.ttl;
  const rotate = (values as { rotate?: { every: string; overlap?: string } }).rotate;
  if (kind.generatedSecret !== undefined && rotate !== undefined && values.ensure !== 'absent') out.rotate = keyRotation(rotate);
  return out;
}

/** An apikey's `rotate:` as the model holds it (the schema checked both durations). */
function keyRotation(rotate: { every: string; overlap?: string }): KeyRotation {
  return { everyMs: durationMs(rotate.every)!, every: rotate.every, overlapMs: rotate.overlap === undefined ? 0 : durationMs(rotate.overlap)!, ...(rotate.overlap === undefined ? {} : { overlap: rotate.overlap }) };
}

/** `{generate: {…}}` as the schema parsed it, or undefined for the other forms. */
function generatedOf(value: unknown): { length: number; classes: readonly PasswordClass[] } | undefined {
  if (typeof value !== 'object' || value === null || !('generate' in value)) return undefined;
  return (value as { generate: { length: number; classes: readonly PasswordClass[] } }).generate;
}

function generatedPassword(generate: { length: number; classes: readonly PasswordClass[] }, rotate: { every: string } | undefined): GeneratedPassword {
  const everyMs = rotate === undefined ? undefined : durationMs(rotate.every);
  return {
    length: generate.length,
    classes: [...new Set(generate.classes)],
    ...(everyMs === undefined ? {} : { rotateEveryMs: everyMs, rotateEvery: rotate!.every }),
  };
}

/**
 * Where the sections are written (a key with nothing after it counts): with several files,
 * each may be written in one of them only, and the changes it causes name that file.
 */
function sectionsOf(source: YamlSource): Sections {
  const raw = source.value;
  const out: { -readonly [K in keyof Sections]: Sections[K] } = {};
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return out;
  for (const section of ['prune', 'protect', 'policy'] as const) {
    if (Object.hasOwn(raw, section)) out[section] = source.locate([section], 'key');
  }
  return out;
}

function policyOf(p: PolicyInput, source: YamlSource): AccessPolicy {
  const ids = (roles: readonly (number | string)[]) => [...new Set(roles.filter((r): r is number => typeof r === 'number'))].sort((a, b) => a - b);
  const forbiddenRoleNames = roleNamesOf(p.forbiddenRoles, (j) => source.locate(['policy', 'forbiddenRoles', j]));
  const approveRoleNames = roleNamesOf(p.approveRoles, (j) => source.locate(['policy', 'approveRoles', j]));
  return {
    superuser: p.superuser,
    forbiddenRoles: ids(p.forbiddenRoles),
    ...(forbiddenRoleNames.length > 0 ? { forbiddenRoleNames } : {}),
    approveRoles: ids(p.approveRoles),
    ...(approveRoleNames.length > 0 ? { approveRoleNames } : {}),
    ...(p.maxSuperuserKeys !== undefined ? { maxSuperuserKeys: p.maxSuperuserKeys } : {}),
    ...(p.usernamePattern !== undefined ? { usernamePattern: p.usernamePattern } : {}),
    ...(p.apikeyNamePattern !== undefined ? { apikeyNamePattern: p.apikeyNamePattern } : {}),
    ...(p.levels !== undefined ? { levels: [...new Set(p.levels)] } : {}),
    ...(p.approveDeletesOver !== undefined ? { approveDeletesOver: p.approveDeletesOver } : {}),
  };
}

/** The roles given by name, each once, with where it was written. */
function roleNamesOf(roles: readonly (number | string)[], locate: (index: number) => SourcePosition): RoleNameRef[] {
  const out: RoleNameRef[] = [];
  const seen = new Set<string>();
  roles.forEach((role, j) => {
    if (typeof role !== 'string' || seen.has(role)) return;
    seen.add(role);
    out.push({ name: role, source: locate(j) });
  });
  return out;
}

/** At most the limit, and a note that more were left out (a reader fixes the first ones anyway). */
function capped(list: Diagnostic[]): Diagnostic[] {
  if (list.length < limits.maxDiagnostics) return list;
  const first = list[0]!;
  return [
    ...list.slice(0, limits.maxDiagnostics),
    { severity: first.severity, code: diagnosticCodes.tooManyProblems, path: '', message: `stopped after ${limits.maxDiagnostics} ${first.severity}s; fix these and run again` },
  ];
}
