import * as z from 'zod';
import { InvalidInputError } from '../errors.js';
import type { Diagnostic, KindDeclaration, ValueType } from '../model/index.js';
import { apikeyKind, fieldsOf, GENERATED, SENSITIVE, sshUserKind, stateFieldsOf } from '../model/index.js';
import { savedPlanFormatVersion, savedPlanKind, type SavedPlan } from './saved-plan.js';

/**
 * The plan file as `amsync apply` accepts it. Strict: a field it does not know is an error,
 * since applying "exactly the reviewed plan" must not quietly ignore part of it. Field values
 * are typed per field, and a password is only ever `(sensitive)`: the value comes from the
 * desired file at apply time, never from the plan.
 */
const hex64 = z.string().regex(/^[0-9a-f]{64}$/, { error: 'expected 64 lowercase hex digits (sha256)' });
const positiveId = z.int().positive();
const kind = z.enum(['sshUser', 'apikey']);
const action = z.enum(['create', 'update', 'delete']);

const change = <T extends z.ZodType>(value: T) => z.strictObject({ before: value.nullable(), after: value.nullable() });
const roleIds = z.array(positiveId);

// Each field's value as the file holds it, from the kinds' declarations (model/kinds).
const values: Record<Exclude<ValueType, 'secret'>, z.ZodType> = { text: z.string(), flag: z.boolean(), roleIds };
const valueOf = (type: ValueType): z.ZodType => (type === 'secret' ? z.never() : values[type]);

/** A sensitive value as a plan holds it: `(sensitive)`, or `(generated)` for a password amsync generates when it writes it. */
const sensitiveValue = z.union([z.literal(SENSITIVE), z.literal(GENERATED)]);

/** A change's `fields`: each declared field at most once; a sensitive one only ever `(sensitive)`. */
export const fieldsSchema = (kind: KindDeclaration) =>
  z.strictObject(Object.fromEntries(fieldsOf(kind).map(([name, field]) => [name, change(field.sensitive ? sensitiveValue : valueOf(field.type)).optional()])));

/** A listing snapshot's item: its id and listed fields. */
export const listedSchema = (kind: KindDeclaration) => z.strictObject({ id: positiveId, ...Object.fromEntries(stateFieldsOf(kind).map(([name, field]) => [name, valueOf(field.type)])) });

const position = z.strictObject({ file: z.string(), line: z.int().positive(), col: z.int().positive() });
const changeBase = {
  action,
  key: z.string().min(1),
  id: positiveId.nullable(),
  reason: z.string().optional(),
  renamedFrom: z.string().min(1).optional(),
  source: position.optional(),
  replaces: positiveId.optional(),
  replaced: z.literal(true).optional(),
};
const changeSchema = z
  .discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal(sshUserKind.kind), ...changeBase, fields: fieldsSchema(sshUserKind) }),
    z.strictObject({ kind: z.literal(apikeyKind.kind), ...changeBase, fields: fieldsSchema(apikeyKind) }),
  ])
  .superRefine((c, ctx) => {
    if (c.replaces !== undefined && c.action !== 'create') ctx.addIssue({ code: 'custom', path: ['replaces'], message: 'only a create replaces a key' });
    if (c.replaced === true && c.action !== 'delete') ctx.addIssue({ code: 'custom', path: ['replaced'], message: 'only a delete is replaced' });
    if (c.renamedFrom !== undefined && c.action !== 'update') ctx.addIssue({ code: 'custom', path: ['renamedFrom'], message: 'only an update renames' });
    if ((c.action === 'create') !== (c.id === null)) ctx.addIssue({ code: 'custom', path: ['id'], message: c.action === 'create' ? 'a create has id null' : `an ${c.action} needs the remote id` });
    for (const [name, f] of Object.entries(c.fields as Record<string, { before: unknown; after: unknown }>)) {
      const ok = c.action === 'create' ? f.before === null && f.after !== null : c.action === 'delete' ? f.after === null : f.before !== null && f.after !== null;
      if (!ok) ctx.addIssue({ code: 'custom', path: ['fields', name], message: `before/after do not fit a ${c.action}` });
    }
  });

const itemRef = z.strictObject({ kind, key: z.string(), id: positiveId });
const problem = z.strictObject({
  kind,
  key: z.string(),
  code: z.enum(['ambiguous', 'missing_password', 'id_not_found', 'identity_conflict']),
  message: z.string(),
  source: position.optional(),
});

const planSchema = z.strictObject({
  summary: z
    .strictObject({ create: z.int().min(0), update: z.int().min(0), delete: z.int().min(0), unchanged: z.int().min(0), unmanaged: z.int().min(0), expired: z.int().positive().optional() })
    .optional(),
  changes: z.array(changeSchema),
  unchanged: z.int().min(0),
  unmanaged: z.array(itemRef),
  protected: z.array(itemRef),
  problems: z.array(problem),
  notes: z.array(z.string()),
  passwordsUnavailable: z
    .strictObject({ references: z.array(z.string().min(1)).min(1), changes: z.array(z.string().min(1)), driftNotChecked: z.array(z.string().min(1)) })
    .optional(),
  selection: z
    .strictObject({
      only: z.array(z.string()),
      exclude: z.array(z.string()),
      omitted: z.strictObject({ declared: z.int().min(0), remote: z.int().min(0) }),
    })
    .optional(),
  observed: z.array(changeSchema).min(1).optional(),
  ignored: z.array(z.strictObject({ kind, field: z.string().min(1), keys: z.union([z.literal('all'), z.array(z.string())]) })).min(1).optional(),
  // Issue 30: the expiries ahead when the plan was made (for the reviewer; apply plans again at its own time).
  expiries: z
    .array(z.strictObject({ kind, key: z.string(), id: positiveId.nullable(), expiresAt: z.iso.datetime({ offset: true }), remainingSeconds: z.int().min(0) }))
    .min(1)
    .optional(),
});

const passwordReference = z.union([
  z.strictObject({ username: z.string().min(1), env: z.string().min(1) }),
  z.strictObject({ username: z.string().min(1), file: z.string().min(1) }),
  z.strictObject({ username: z.string().min(1), literal: z.literal(true) }),
]);

export const savedPlanSchema = z.strictObject({
  formatVersion: z.literal(savedPlanFormatVersion),
  kind: z.literal(savedPlanKind),
  amsyncVersion: z.string().min(1),
  createdAt: z.iso.datetime(),
  desiredFile: z.string().min(1),
  desiredFileHash: hex64,
  desiredSources: z
    .strictObject({
      paths: z.array(z.string().min(1)).min(1),
      recursive: z.boolean().optional(),
      files: z.array(z.strictObject({ file: z.string().min(1), hash: hex64 })),
    })
    .optional(),
  serviceUrl: z.url({ protocol: /^https?$/ }),
  settings: z.strictObject({
    prune: z.strictObject({ sshUsers: z.boolean(), apikeys: z.boolean() }),
    rotatePasswords: z.boolean(),
    passwordMode: z.enum(['state', 'create-only', 'rotate']),
    allowEmptyPrune: z.boolean(),
    maxDeletes: z.int().min(0),
    deleteDuplicateApikeys: z.boolean().optional(),
    selection: z.strictObject({ only: z.array(z.string().min(1)), exclude: z.array(z.string().min(1)), replace: z.array(z.string().min(1)), unmatchedAllowed: z.literal(true).optional() }).optional(),
    observe: z.boolean().optional(),
  }),
  actualFingerprint: hex64,
  plan: planSchema,
  approvals: z
    .strictObject({
      setHash: z.string().regex(/^[0-9a-f]{16}$/),
      changes: z.array(z.strictObject({ index: z.int().min(0), hash: z.string().regex(/^[0-9a-f]{16}$/), rules: z.array(z.enum(['superuser', 'approveRoles', 'approveDeletesOver'])).min(1) })).min(1),
    })
    .optional(),
  passwords: z.array(passwordReference),
  actual: z.strictObject({
    sshUsers: z.array(listedSchema(sshUserKind)),
    apikeys: z.array(listedSchema(apikeyKind)),
  }),
});

/** At most this many schema findings are listed; the first ones say what is wrong. */
const maxListed = 20;

/**
 * Plan file text -> SavedPlan, or InvalidInputError (exit 65) that says plainly whether the
 * file is not JSON, not an amsync plan at all, of another format version, or a damaged plan.
 */
export function parseSavedPlan(text: string, shownPath: string): SavedPlan {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // Not the parser's message: it quotes the text, and a mistaken argument may be a secret file.
    throw invalid('plan_invalid', `${shownPath} is not an amsync plan file: it is not JSON; make one with \`amsync plan --out FILE\``, []);
  }
  const doc = raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : undefined;
  if (doc?.kind !== savedPlanKind) {
    throw invalid('plan_foreign', `${shownPath} is not an amsync plan file (it has no "kind": "${savedPlanKind}")${foreignTool(doc)}; make one with \`amsync plan --out FILE\``, []);
  }
  // Our kind without a format: not a file amsync wrote (every saved plan carries its format).
  if (typeof doc.formatVersion !== 'number') {
    throw invalid('plan_foreign', `${shownPath} is not an amsync plan file: it has "kind": "${savedPlanKind}" but no "formatVersion", which every plan amsync saves carries; make one with \`amsync plan --out FILE\``, []);
  }
  if (doc.formatVersion !== savedPlanFormatVersion) {
    throw invalid(
      'plan_version',
      `${shownPath} is an amsync plan of format ${JSON.stringify(doc.formatVersion)}; this amsync reads format ${savedPlanFormatVersion}: plan again with this version`,
      [],
    );
  }
  const parsed = savedPlanSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues;
    const diagnostics: Diagnostic[] = issues.slice(0, maxListed).map((issue) => ({
      severity: 'error',
      code: 'plan_invalid',
      message: issue.message,
      path: formatPath(issue.path),
    }));
    const more = issues.length > maxListed ? ` (the first ${maxListed} of ${issues.length} are listed)` : '';
    throw invalid('plan_invalid', `${shownPath} is a damaged or edited amsync plan: ${issues.length} problem${issues.length === 1 ? '' : 's'}${more}; plan again`, diagnostics);
  }
  // The summary is for people reading the file; the changes are what counts.
  const { summary: _summary, ...plan } = parsed.data.plan;
  // Field values are typed by the schema built from the declarations, which the compiler cannot follow.
  return { ...parsed.data, plan } as unknown as SavedPlan;
}

function invalid(code: string, message: string, diagnostics: Diagnostic[]): InvalidInputError {
  return new InvalidInputError(message, diagnostics, code);
}

/** `plan.changes[3].fields.roles`, as the desired-file diagnostics write paths. */
function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((out, p) => (typeof p === 'number' ? `${out}[${p}]` : out === '' ? String(p) : `${out}.${String(p)}`), '');
}

/** What a foreign JSON document looks like, when it says: a Terraform plan, or a file of another kind. */
function foreignTool(doc: Record<string, unknown> | undefined): string {
  if (doc === undefined) return '';
  if ('terraform_version' in doc || ('format_version' in doc && ('planned_values' in doc || 'resource_changes' in doc))) return ': it is a Terraform plan (`terraform show -json`)';
  // The kind is quoted escaped: a file given by mistake may hold anything.
  if (typeof doc.kind === 'string') return `: its "kind" is ${JSON.stringify(doc.kind.slice(0, 64))}`;
  return '';
}
