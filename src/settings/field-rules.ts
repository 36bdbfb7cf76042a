import { createRequire } from 'node:module';
import type { validate as ValidateCron } from 'node-cron';
import { parseKubeSecretKeyRef, parseKubeSecretRef } from './kube-secret-ref.js';
import { parseLeaseRef } from './lease-ref.js';
import * as z from 'zod';
import { quote, rangeWords } from '../yaml/index.js';
import { envNamePattern } from '../secrets/index.js';
import { notifyEventNames } from '../model/index.js';
import { durationMs } from './duration.js';
import { daemonModes, logLevels, syncWindowKinds, webhookFormats, type SyncWindowSetting, type WebhookSetting } from './settings.js';

/**
 * One rule per kind of settings value: its zod schema (for the settings file) and how a
 * string from the environment or a flag becomes a value. Shared so that a bad value reads the
 * same wherever it was given: "a number greater than 0".
 */
export interface FieldRule<T> {
  readonly schema: z.ZodType<T>;
  /** "a number greater than 0": what was expected, for messages. */
  readonly expected: string;
  /** Text (env or flag) -> value; undefined when the text is not of the right kind. */
  readonly fromText: (text: string) => unknown;
}

const decimal = /^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;
const numberFromText = (text: string): unknown => (decimal.test(text.trim()) ? Number(text.trim()) : undefined);
const asIs = (text: string): unknown => text;

// node-cron, loaded when a schedule is first checked: most commands never see one.
let cronValidate: typeof ValidateCron | undefined;
function validateCron(): typeof ValidateCron {
  cronValidate ??= (createRequire(import.meta.url)('node-cron') as { validate: typeof ValidateCron }).validate;
  return cronValidate;
}

/**
 * A rule whose zod schema is built when first used. Every command loads the rules (the option
 * table is made of them) but most check no setting; building their schemas at load was ~6 ms
 * of every start (docs/performance.md, "Cold start").
 */
export function lazyRule<T>(rule: { readonly schema: () => z.ZodType<T>; readonly expected: string; readonly fromText: (text: string) => unknown }): FieldRule<T> {
  let schema: z.ZodType<T> | undefined;
  return {
    get schema() {
      schema ??= rule.schema();
      return schema;
    },
    expected: rule.expected,
    fromText: rule.fromText,
  };
}

function intRule(min: number): FieldRule<number> {
  return lazyRule({ schema: () => z.int().min(min), expected: rangeWords('int', min, true), fromText: numberFromText });
}

export const rules = {
  url: lazyRule<string>({
    schema: () => z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' }),
    expected: 'an http:// or https:// URL',
    fromText: asIs,
  }),
  path: lazyRule<string>({ schema: () => z.string().min(1), expected: 'a path', fromText: asIs }),
  positiveNumber: lazyRule<number>({
    schema: () => z.number().positive(),
    expected: rangeWords('number', 0, false),
    fromText: numberFromText,
  }),
  int0: intRule(0),
  int1: intRule(1),
  boolean: lazyRule<boolean>({
    schema: () => z.boolean(),
    expected: 'true or false',
    fromText: (text: string): unknown => {
      const t = text.trim().toLowerCase();
      if (['true', '1', 'yes', 'on'].includes(t)) return true;
      if (['false', '0', 'no', 'off'].includes(t)) return false;
      return undefined;
    },
  }),
  logLevel: lazyRule<(typeof logLevels)[number]>({ schema: () => z.enum(logLevels), expected: `one of ${logLevels.join(', ')}`, fromText: asIs }),
  mode: lazyRule<(typeof daemonModes)[number]>({ schema: () => z.enum(daemonModes), expected: `one of ${daemonModes.join(', ')}`, fromText: asIs }),
  cron: lazyRule<string>({
    schema: () => z.string().refine((s) => validateCron()(s), {
      error: (issue) => `${quote(String(issue.input))} is not a cron expression (five fields, or six with seconds first), e.g. "*/5 * * * *"`,
    }),
    expected: 'a cron expression such as "*/5 * * * *"',
    fromText: asIs,
  }),
  leaseRef: lazyRule<string>({
    schema: () => z.string().refine((s) => parseLeaseRef(s) !== undefined, {
      error: (issue) => `${quote(String(issue.input))} is not a Lease: expected lease:NAMESPACE/NAME, e.g. lease:amsync/amsync-leader`,
    }),
    expected: 'lease:NAMESPACE/NAME',
    fromText: asIs,
  }),
  kubeSecretRef: lazyRule<string>({
    schema: () => z.string().refine((s) => parseKubeSecretRef(s) !== undefined, {
      error: (issue) => `${quote(String(issue.input))} is not a Kubernetes Secret: expected NAMESPACE/NAME, e.g. amsync/amsync-tokens`,
    }),
    expected: 'NAMESPACE/NAME of a Kubernetes Secret',
    fromText: asIs,
  }),
  kubeSecretKeyRef: lazyRule<string>({
    schema: () => z.string().refine((s) => parseKubeSecretKeyRef(s) !== undefined, {
      error: (issue) => `${quote(String(issue.input))} is not a Kubernetes Secret's data key: expected NAMESPACE/NAME or NAMESPACE/NAME/KEY, e.g. amsync/amsync-credentials/integrator-key`,
    }),
    expected: 'NAMESPACE/NAME[/KEY] of a Kubernetes Secret',
    fromText: asIs,
  }),
  listen: lazyRule<string>({
    schema: () => z.string().refine(isHostPort, { error: 'expected HOST:PORT, e.g. 127.0.0.1:9477 (port 0 to 65535)' }),
    expected: 'HOST:PORT such as 127.0.0.1:9477',
    fromText: asIs,
  }),
} as const;

/** One of `notify.webhooks`: the HMAC key only by reference (an env variable or a file). */
const describe = <T extends z.ZodType>(schema: T, description: string): T => schema.meta({ description });
const webhookSchema = () =>
  z
    .strictObject({
      url: describe(rules.url.schema, 'Where notifications are POSTed; plain http only to loopback unless http.allowInsecureHttp.'),
      secretEnv: describe(z.string().regex(envNamePattern, { error: 'expected the name of an environment variable, e.g. AMSYNC_WEBHOOK_KEY' }).optional(), 'Environment variable holding the HMAC-SHA256 key: the body is signed in X-Amsync-Signature.'),
      secretFile: describe(rules.path.schema.optional(), 'File holding the HMAC-SHA256 key (one trailing newline ignored). Not together with secretEnv.'),
      format: describe(z.enum(webhookFormats).optional(), "json (amsync's signed payload, the default) or slack ({text, blocks} for a Slack incoming webhook)."),
      events: describe(z.array(z.enum(notifyEventNames)).min(1).optional(), 'Only these events; unset: every event.'),
    })
    .refine((w) => w.secretEnv === undefined || w.secretFile === undefined, { error: 'name the HMAC key once: secretEnv or secretFile, not both' });

/** A list of webhooks: only in a settings file (no variable or flag can hold a list of objects). */
export const webhooksRule: FieldRule<readonly WebhookSetting[]> = lazyRule({
  schema: () => z.array(webhookSchema()) as unknown as z.ZodType<readonly WebhookSetting[]>,
  expected: 'a list of webhooks ({url, secretEnv or secretFile, format, events})',
  fromText: () => undefined,
});

/** The longest sync window: checking whether one is open looks back over its duration minute by minute. */
export const maxWindowMs = 7 * 86_400_000;

/** Whether Intl knows the IANA time zone (`Europe/Berlin`, `UTC`). */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const windowSchema = () =>
  z.strictObject({
    kind: describe(z.enum(syncWindowKinds), 'deny: the daemon observes only inside the window; allow: when any allow window exists, it writes only inside one.'),
    schedule: describe(
      z.string().refine((s) => s.trim().split(/\s+/).length === 5 && validateCron()(s), {
        error: (issue) => `${quote(String(issue.input))} is not a cron expression of five fields (minute hour day month weekday), e.g. "0 22 * * 5"`,
      }),
      'When the window opens: five cron fields, in the time zone.',
    ),
    duration: describe(
      z.string().refine((s) => (durationMs(s) ?? Infinity) <= maxWindowMs, { error: (issue) => `${quote(String(issue.input))} is not a duration of at most 7 days such as 2h, 30m, 90s or 1h30m` }),
      'How long the window stays open from each time the schedule fires: 2h, 30m, 90s, 1d, 1h30m (at most 7 days).',
    ),
    timezone: describe(z.string().refine(isTimeZone, { error: (issue) => `${quote(String(issue.input))} is not an IANA time zone such as Europe/Berlin` }).optional(), 'IANA time zone of the schedule; default UTC.'),
  });

/** `daemon.windows`: only in a settings file (no variable or flag can hold a list of objects). */
export const windowsRule: FieldRule<readonly SyncWindowSetting[]> = lazyRule({
  schema: () => z.array(windowSchema()) as unknown as z.ZodType<readonly SyncWindowSetting[]>,
  expected: 'a list of sync windows ({kind, schedule, duration, timezone})',
  fromText: () => undefined,
});

/** `127.0.0.1:9477`, `localhost:0`, `[::1]:9477`, `0.0.0.0:80`. */
export function isHostPort(text: string): boolean {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(text);
  return match !== null && Number(match[2]) <= 65535;
}

/** A string from the environment or a flag -> a checked value, or what was expected. */
export function parseText<T>(rule: FieldRule<T>, text: string): { ok: true; value: T } | { ok: false; expected: string } {
  const raw = rule.fromText(text);
  if (raw === undefined) return { ok: false, expected: rule.expected };
  const parsed = rule.schema.safeParse(raw);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, expected: rule.expected };
}

/** Like parseText, for a value that may already be typed (a flag commander parsed). */
export function checkValue<T>(rule: FieldRule<T>, value: unknown): { ok: true; value: T } | { ok: false; expected: string } {
  if (typeof value === 'string') return parseText(rule, value);
  const parsed = rule.schema.safeParse(value);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, expected: rule.expected };
}
