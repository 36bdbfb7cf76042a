import * as z from 'zod';
import { envNamePattern } from '../secrets/index.js';
import { quote } from '../yaml/index.js';
import { targetSelectorSchema } from './target-selector.js';

/**
 * The desired-state file as written (DESIGN.md §3). This schema checks shapes and types and
 * is the source of config/access.schema.json; the checks that need more than one value
 * (duplicates, globs, secrets) are in check-desired.ts. Descriptions show in editors.
 */

const noOuterSpaces = (s: string) => s.trim() === s;

export const secretInputSchema = z
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
  .meta({ description: 'Write-only password: { env: NAME }, { file: PATH }, or a literal (warned). Needed to create the user; left out, an existing password is left alone.' });

/** A role by id or by name, as apikeys and the policy's role lists write it. */
const roleRef = z.union([
  z.int().positive().meta({ description: 'A role id.' }),
  z
    .string()
    .min(1)
    .refine(noOuterSpaces, { error: (issue) => `role name ${quote(String(issue.input))} has leading or trailing spaces` })
    // `"2"` is an id in quotes far more often than a role named 2: say so, not "no role named '2'".
    .refine((s) => !/^\s*[-+]?\d+(\.\d+)?\s*$/.test(s), { error: 'a number in quotes' })
    .meta({ description: "A role name, resolved to its id through the service's roles listing (GET /api/roles)." }),
]);

const pinnedId = z.int().positive().meta({ description: 'Pins identity: adopt the remote item with this id, or rename it by id.' });

const ensure = z.enum(['present', 'absent']).default('present').meta({ description: '`absent` deletes the item if it exists; such an item needs only its identity.' });

export const sshUserSchema = z
  .strictObject({
    username: z.string().min(1).refine(noOuterSpaces, { error: (issue) => `username ${quote(String(issue.input))} has leading or trailing spaces` }).meta({ description: 'Unique user name: the identity of the SSH user unless `id` is given.' }),
    id: pinnedId.optional(),
    level: z.string().min(1).default('n1').meta({ description: 'Permission level. `n1` is the only level the service documents; another value is sent as written, with a warning.' }),
    password: secretInputSchema.optional(),
    ensure,
    targets: targetSelectorSchema.optional(),
  })
  .meta({ title: 'SSH user' });

export const apikeySchema = z
  .strictObject({
    name: z.string().min(1).refine(noOuterSpaces, { error: (issue) => `name ${quote(String(issue.input))} has leading or trailing spaces` }).meta({ description: 'Full name of the key: its identity unless `id` is given.' }),
    id: pinnedId.optional(),
    superuser: z.boolean().default(false).meta({ description: 'Superuser permissions.' }),
    roles: z
      .array(roleRef)
      .default([])
      .meta({ description: 'Role ids or names (`[auditor, 7]`): the key gets exactly these roles (compared as a set of ids).' }),
    ensure,
    targets: targetSelectorSchema.optional(),
  })
  .meta({ title: 'apikey (integration key)' });

const glob = z.string().min(1).meta({ description: 'A glob (picomatch) matched against usernames or apikey names.' });

const namePattern = (what: string) =>
  z
    .string()
    .min(1)
    .meta({
      description: `A regular expression (JavaScript syntax) every declared ${what} must match as a whole, as if between ^ and $. Matched in linear time; a pattern that needs backtracking (a back-reference) is refused.`,
    });

export const policySchema = z
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

export const desiredFileSchema = z
  .strictObject({
    sshUsers: z.array(sshUserSchema).nullable().default([]).meta({ description: 'SSH users to keep in the declared state.' }),
    apikeys: z.array(apikeySchema).nullable().default([]).meta({ description: 'Integration keys to keep in the declared state. Their tokens are generated by the service.' }),
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
    policy: policySchema
      .nullable()
      .optional()
      .meta({ description: 'Rules checked offline (validate) and on every plan, and which changes need an approval (DESIGN.md §10). In one file only when several are given.' }),
    targets: targetSelectorSchema.optional().meta({
      description: 'Fleet only (--targets): the targets of every item that names none, by name or by labels. Default: every target.',
    }),
  })
  .meta({
    title: 'amsync desired state',
    description: 'SSH users and apikeys that amsync keeps the Access Management Service in. See DESIGN.md §3.',
  });

export type DesiredFileInput = z.input<typeof desiredFileSchema>;
export type DesiredFile = z.output<typeof desiredFileSchema>;
export type PolicyInput = z.output<typeof policySchema>;
