import * as z from 'zod';
import type { Ensure, FieldDeclaration, KindDeclaration, StateFieldName, WriteOnlyFieldName } from '../model/index.js';
import { apikeyKind, expiresAtMs, fieldsOf, identityOf, ignorableFieldsOf, sshUserKind, ttlMs } from '../model/index.js';
import { envNamePattern } from '../secrets/index.js';
import { numberInQuotes, quote } from '../yaml/index.js';
import { noOuterSpaces } from './name-rules.js';
import { buildTargetSelectorSchema } from './target-selector.js';

/**
 * The desired-state file as written (DESIGN.md §3). This schema checks shapes and types and
 * is the source of config/access.schema.json; the checks that need more than one value
 * (duplicates, globs, secrets) are in check-desired.ts. Descriptions show in editors.
 *
 * Built when first asked for (desiredFileSchema()): a file the quick check accepts
 * (quick-check.ts, the common case) never needs it, and building its ~80 schemas at load was
 * ~4 ms of every start. A piece used in several places is built once and shared, as it was
 * when each was a module constant.
 */

const secretInputSchema = (description: string) =>
  z
    .union([
      z.string().meta({ description: 'A literal password. Accepted with a warning: keep secrets out of the file.' }),
      z
        .strictObject({
          env: z
            .string()
            .regex(envNamePattern, { error: (issue) => `${quote(String(issue.input))} is not an environment variable name (letters, digits and _, not starting with a digit)` })
            .meta({ description: 'Name of the environment variable holding the password. It must be set and non-empty.' }),
        })
        .meta({ title: 'from the environment' }),
      z
        .strictObject({
          file: z.string().min(1).meta({
            description: "Path of a file holding the password, relative to this file's folder. One trailing newline is dropped; it must be readable and non-empty.",
          }),
        })
        .meta({ title: 'from a file' }),
    ])
    .meta({ description });

/** A role by id or by name, as apikeys and the policy's role lists write it. */
const roleRefSchema = () =>
  z.union([
    z.int().positive().meta({ description: 'A role id.' }),
    z
      .string()
      .min(1)
      .refine(noOuterSpaces, { error: (issue) => `role name ${quote(String(issue.input))} has leading or trailing spaces` })
      // `"2"` is an id in quotes far more often than a role named 2: say so, not "no role named '2'".
      .refine((s) => !numberInQuotes.test(s), { error: 'a number in quotes' })
      .meta({ description: "A role name, resolved to its id through the service's roles listing (GET /api/roles)." }),
  ]);

const pinnedIdSchema = () => z.int().positive().meta({ description: 'Pins identity: adopt the remote item with this id, or rename it by id.' });

const ensureSchema = () => z.enum(['present', 'absent']).default('present').meta({ description: '`absent` deletes the item if it exists; such an item needs only its identity.' });

/** `renamedFrom:` of a kind: former identities, each a name as the identity is written. */
const renamedFromSchema = (kind: KindDeclaration) => {
  const name = identityOf(kind);
  return z
    .array(z.string().min(1).refine(noOuterSpaces, { error: (issue) => `${name} ${quote(String(issue.input))} has leading or trailing spaces` }))
    .min(1)
    .meta({
      description: `Former ${name}s of this ${kind.noun}: a remote ${kind.noun} carrying one (and none carrying the new ${name}) is renamed in place by PUT on its id, which keeps its id${kind.generatedSecret ? ` and ${kind.generatedSecret}` : ''}.`,
    });
};

/** The fields of a kind that `ignore:` may name: its updatable fields, not its identity (model/kinds). */
export const ignoreFieldSchema = (kind: KindDeclaration) =>
  z.enum(ignorableFieldsOf(kind) as [string, ...string[]]).meta({ description: `A field of the ${kind.noun} that amsync sends on create when declared and never updates nor reports as drift.` });

const ignoreSchema = (kind: KindDeclaration) =>
  z.array(ignoreFieldSchema(kind)).meta({ description: 'Fields another owner may edit: sent on create when declared, never updated, never shown as drift.' });

const modeSchema = () =>
  z.enum(['observe']).meta({ description: '`observe`: drift is reported (plan, metrics, notifications) and never written; the item is never deleted (prune or `ensure: absent`).' });

const expiresSchema = (kind: KindDeclaration) =>
  z
    .string()
    .refine((s) => expiresAtMs(s) !== undefined, { error: (issue) => `${quote(String(issue.input))} is not an RFC 3339 date-time with an offset (e.g. 2026-12-31T18:00:00Z)` })
    .meta({
      description: `When this ${kind.noun}'s access ends (RFC 3339 with an offset, e.g. 2026-12-31T18:00:00Z): past it the ${kind.noun} is deleted (reason \`expired\`, a verified delete inside the deletion budget) and never re-created while the file says so. Not with \`ttl\`.`,
    });

const ttlSchema = (kind: KindDeclaration) =>
  z
    .string()
    .refine((s) => ttlMs(s) !== undefined, { error: (issue) => `${quote(String(issue.input))} is not a duration: a positive number and a unit (30s, 15m, 72h, 90d)` })
    .meta({
      description: `How long this ${kind.noun} lives, counted from its create (as amsync recorded it in the state file): a number and a unit (30s, 15m, 72h, 90d). Past it, it is deleted as with \`expires\`. Not with \`expires\`.`,
    });

/** Schemas used by more than one item schema. */
interface Shared {
  readonly roleRef: ReturnType<typeof roleRefSchema>;
  readonly pinnedId: ReturnType<typeof pinnedIdSchema>;
  readonly ensure: ReturnType<typeof ensureSchema>;
  readonly targets: ReturnType<typeof buildTargetSelectorSchema>;
}

/** A field's value as the file holds it once defaults are filled in. */
interface FileValues {
  readonly text: string;
  readonly flag: boolean;
  readonly roleIds: (number | string)[];
  readonly secret: z.output<ReturnType<typeof secretInputSchema>>;
}
type FileValueOf<F extends FieldDeclaration> = FileValues[F['type']];

/** An item of a kind as the file holds it (the kind's fields, then `id`, `ensure`, `targets`). */
export type FileItemOf<K extends KindDeclaration> = { [F in StateFieldName<K>]: FileValueOf<K['fields'][F]> } & {
  [F in WriteOnlyFieldName<K>]?: FileValueOf<K['fields'][F]>;
} & { id?: number; ensure: Ensure; targets?: z.output<Shared['targets']>; renamedFrom?: string[]; ignore?: string[]; mode?: 'observe'; expires?: string; ttl?: string };

/** One field's schema, from its declaration (model/kinds): type, default, description. */
function fieldSchema(name: string, field: FieldDeclaration, shared: Shared): z.ZodType {
  const meta = { description: field.description };
  if (field.identity) {
    return z.string().min(1).refine(noOuterSpaces, { error: (issue) => `${name} ${quote(String(issue.input))} has leading or trailing spaces` }).meta(meta);
  }
  if (field.type === 'secret') return secretInputSchema(field.description).optional();
  const value: z.ZodType = field.type === 'text' ? z.string().min(1) : field.type === 'flag' ? z.boolean() : z.array(shared.roleRef);
  return field.default === undefined ? value.meta(meta) : value.default(field.default as never).meta(meta);
}

/**
 * An item's schema, from its kind's declaration: the identity first, then `id`, the other
 * fields in declaration order, `ensure` and `targets` (the order of the JSON Schema's keys).
 */
function itemSchema<K extends KindDeclaration>(kind: K, shared: Shared): z.ZodType<FileItemOf<K>> {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, field] of fieldsOf(kind)) {
    shape[name] = fieldSchema(name, field, shared);
    if (field.identity) shape.id = shared.pinnedId.optional();
  }
  return z
    .strictObject({
      ...shape,
      ensure: shared.ensure,
      targets: shared.targets.optional(),
      renamedFrom: renamedFromSchema(kind).optional(),
      ignore: ignoreSchema(kind).optional(),
      mode: modeSchema().optional(),
      expires: expiresSchema(kind).optional(),
      ttl: ttlSchema(kind).optional(),
    })
    .meta({ title: kind.title }) as unknown as z.ZodType<FileItemOf<K>>;
}

const globSchema = () =>
  z.string().min(1).meta({ description: 'A glob (picomatch) matched against usernames or apikey names.' });

const namePattern = (what: string) =>
  z
    .string()
    .min(1)
    .meta({
      description: `A regular expression (JavaScript syntax) every declared ${what} must match as a whole, as if between ^ and $. Matched in linear time; a pattern that needs backtracking (a back-reference) is refused.`,
    });

const policySchema = (roleRef: Shared['roleRef']) =>
  z
    .strictObject({
      superuser: z
        .enum(['allow', 'forbid', 'approve'])
        .default('approve')
        .meta({ description: 'Apikeys with `superuser: true`. allow: as any change; forbid: the file may declare none; approve (the default once a policy is written): creating one, or updating one to it, needs an approval bound to that change.' }),
      forbiddenRoles: z.array(roleRef).default([]).meta({ description: 'Role ids or names no declared apikey may hold.' }),
      approveRoles: z.array(roleRef).default([]).meta({ description: 'Role ids or names whose grant (a new key with one, or one added to a key) needs an approval.' }),
      maxSuperuserKeys: z
        .int()
        .min(0)
        .optional()
        .meta({ description: 'Most superuser apikeys the service may have once a plan is applied: declared ones and unmanaged ones left in place. Over it in the file: invalid; over it because of the service: the plan is refused (exit 3).' }),
      usernamePattern: namePattern('SSH username').optional(),
      apikeyNamePattern: namePattern('apikey name').optional(),
      levels: z.array(z.string().min(1)).min(1).optional().meta({ description: 'The SSH levels a declared user may have (e.g. [n1]).' }),
      approveDeletesOver: z
        .int()
        .min(0)
        .optional()
        .meta({ description: 'A plan with more deletes than this needs an approval for each delete (0: every delete). Below the deletion budget (maxDeletes), which refuses outright.' }),
    })
    .meta({ title: 'policy' });

function fileSchema(shared: Shared, policy: ReturnType<typeof policySchema>) {
  const glob = globSchema();
  return z
    .strictObject({
      sshUsers: z.array(itemSchema(sshUserKind, shared)).nullable().default([]).meta({ description: 'SSH users to keep in the declared state.' }),
      apikeys: z.array(itemSchema(apikeyKind, shared)).nullable().default([]).meta({ description: 'Integration keys to keep in the declared state. Their tokens are generated by the service.' }),
      prune: z
        .strictObject({
          sshUsers: z.boolean().default(false).meta({ description: 'Delete remote SSH users that are not declared. Off: they are reported as unmanaged.' }),
          apikeys: z.boolean().default(false).meta({ description: 'Delete remote apikeys that are not declared. Off: they are reported as unmanaged.' }),
        })
        .nullable()
        .default({ sshUsers: false, apikeys: false })
        .meta({ description: 'Delete remote items that are not declared (default: off for both kinds).' }),
      protect: z
        .strictObject({
          sshUsers: z.array(glob).nullable().default([]),
          apikeys: z.array(glob).nullable().default([]),
        })
        .nullable()
        .default({ sshUsers: [], apikeys: [] })
        .meta({ description: 'Globs of usernames / apikey names that amsync never changes or deletes, prune or not.' }),
      policy: policy
        .nullable()
        .optional()
        .meta({ description: 'Rules checked offline (validate) and on every plan, and which changes need an approval (DESIGN.md §10). In one file only when several are given.' }),
      targets: shared.targets.optional().meta({
        description: 'Fleet only (--targets): the targets of every item that names none, by name or by labels. Default: every target.',
      }),
      ignore: z
        .strictObject({
          sshUsers: ignoreSchema(sshUserKind).optional(),
          apikeys: ignoreSchema(apikeyKind).optional(),
        })
        .optional()
        .meta({ description: "Fields ignored on every item of a kind in this file (added to each item's own `ignore:`)." }),
    })
    .meta({
      title: 'amsync desired state',
      description: 'SSH users and apikeys that amsync keeps the Access Management Service in. See DESIGN.md §3.',
    });
}

/** One kind's item schema on its own (a test builds one for a declaration of its own). */
export function desiredItemSchema<K extends KindDeclaration>(kind: K): z.ZodType<FileItemOf<K>> {
  return itemSchema(kind, { roleRef: roleRefSchema(), pinnedId: pinnedIdSchema(), ensure: ensureSchema(), targets: buildTargetSelectorSchema() });
}

function buildDesiredSchemas() {
  const shared: Shared = { roleRef: roleRefSchema(), pinnedId: pinnedIdSchema(), ensure: ensureSchema(), targets: buildTargetSelectorSchema() };
  const policy = policySchema(shared.roleRef);
  return { desiredFileSchema: fileSchema(shared, policy), policySchema: policy };
}

type DesiredSchemas = ReturnType<typeof buildDesiredSchemas>;
let schemas: DesiredSchemas | undefined;

/** The whole file's schema (a memo). */
export function desiredFileSchema(): DesiredSchemas['desiredFileSchema'] {
  schemas ??= buildDesiredSchemas();
  return schemas.desiredFileSchema;
}

export type DesiredFileInput = z.input<DesiredSchemas['desiredFileSchema']>;
export type DesiredFile = z.output<DesiredSchemas['desiredFileSchema']>;
export type PolicyInput = z.output<DesiredSchemas['policySchema']>;
