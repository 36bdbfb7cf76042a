import * as z from 'zod';
import { labelsSchema, targetNameSchema } from '../desired/index.js';
import { envNamePattern } from '../secrets/index.js';
import { rules } from '../settings/index.js';

/**
 * The targets file (`--targets FILE`, README, "Fleet: one access file, many services") as written: the services of a fleet, each
 * with its URL, a credential by reference, labels, and the client settings it overrides. The
 * source of config/targets.schema.json; the checks across targets (unique names and URLs) and
 * the credential references are in parse-targets.ts.
 */

const credentialRef = z
  .union([
    z
      .strictObject({
        env: z
          .string()
          .regex(envNamePattern, { error: (issue) => `${JSON.stringify(issue.input)} is not an environment variable name (letters, digits and _, not starting with a digit)` })
          .meta({ description: 'Name of the environment variable holding it. It must be set and non-empty.' }),
      })
      .meta({ title: 'from the environment' }),
    z
      .strictObject({
        file: z.string().min(1).meta({ description: "Path of the file holding it, relative to the targets file's folder; re-read on a 401 (a token) or written back when the service rotates it (an integrator key)." }),
      })
      .meta({ title: 'from a file' }),
  ])
  .meta({ description: '{ env: NAME } or { file: PATH }: never the value itself.' });

/** An integrator key may also live in a Kubernetes Secret, which the rotated key is written back to. */
const integratorKeyRef = z
  .union([
    ...credentialRef.options,
    z
      .strictObject({
        secret: rules.kubeSecretKeyRef.schema.meta({
          description: 'NAMESPACE/NAME[/KEY] of a Kubernetes Secret holding it (data key KEY, default integrator-key): read before each exchange, and the rotated key written back with the resourceVersion it was read at. The Secret must exist.',
        }),
      })
      .meta({ title: 'from a Kubernetes Secret' }),
  ])
  .meta({ description: '{ env: NAME }, { file: PATH } or { secret: NAMESPACE/NAME[/KEY] }: never the value itself.' });

export const targetSchema = z
  .strictObject({
    name: targetNameSchema().meta({ description: 'Unique name of the target: lowercase letters, digits and -, at most 63. It names the target in output, metrics, token folders and state files.' }),
    url: rules.url.schema.meta({ description: 'Base URL of the service. Each target has its own; two targets with one URL would be two writers.' }),
    token: credentialRef.optional().meta({ description: 'An access token by reference: { env: NAME } or { file: PATH } (re-read on 401). Not together with integratorKey.' }),
    integratorKey: integratorKeyRef.optional().meta({ description: 'An integrator key (refresh token) by reference: { env: NAME }, { file: PATH } or { secret: NAMESPACE/NAME[/KEY] } (a rotated key is written back to the file or the Secret). Not together with token.' }),
    labels: labelsSchema().optional().meta({ description: 'Labels the desired file selects targets by: `{site: sp, env: prod}`.' }),
    rate: rules.positiveNumber.schema.optional().meta({ description: 'Ceiling in requests per second for this target (over --rate).' }),
    concurrency: rules.int1.schema.optional().meta({ description: 'Requests in flight at most for this target (over --concurrency).' }),
    caFile: rules.path.schema.optional().meta({ description: "PEM bundle of this target's private CA, relative to the targets file's folder (over --ca-file)." }),
    pageSize: rules.int1.schema.optional().meta({ description: 'The largest list page asked for on this target (over --page-size).' }),
    mode: z
      .enum(['apply', 'observe'])
      .optional()
      .meta({ description: '`observe`: drift on this target is reported (plan, metrics, notifications) and never written; no delete is planned for it (prune or `ensure: absent`). Default: apply.' }),
  })
  .meta({ title: 'target' });

export const targetsFileSchema = z
  .strictObject({
    targets: z.array(targetSchema).min(1).meta({ description: 'The services of the fleet.' }),
  })
  .meta({
    title: 'amsync targets',
    description: 'The services one desired-state file is kept on (amsync --targets FILE). See the README, "Fleet: one access file, many services".',
  });

export type TargetsFileInput = z.input<typeof targetsFileSchema>;
export type TargetsFileValue = z.output<typeof targetsFileSchema>;
