import * as z from 'zod';
import type { Action, Kind } from '../model/index.js';

/** What started the run that wrote. */
export const auditTriggers = ['file-change', 'schedule', 'manual', 'saved-plan', 'startup'] as const;
export type AuditTrigger = (typeof auditTriggers)[number];

/** A line is written before a write is sent (`attempt`) and after it ended (`result`). */
export const auditPhases = ['attempt', 'result'] as const;
export type AuditPhase = (typeof auditPhases)[number];

/** How a write ended, as ChangeResult.status says it. */
export const auditStatuses = ['applied', 'failed', 'skipped'] as const;
export type AuditStatus = (typeof auditStatuses)[number];

/** Which process wrote: enough to find its logs. */
export interface AuditProcess {
  readonly pid: number;
  readonly host: string;
  readonly user: string;
}

/** A field value an audit line may show: never a password or a token (see AuditLog). */
export type AuditValue = string | number | boolean | null | readonly (string | number | boolean | null)[];

/** What a caller records: one write about to be sent, or how it ended. */
export interface AuditEntry {
  /** The service's name in a fleet (its targets-file name), or null for the one service. */
  readonly target: string | null;
  readonly kind: Kind;
  /** Username or apikey name. */
  readonly key: string;
  /** Remote id; null for a create's attempt. */
  readonly id: number | null;
  readonly action: Action;
  readonly phase: AuditPhase;
  /** Results only; an attempt has none. */
  readonly status?: AuditStatus;
  /** A failed result's error code (`conflict`, `timeout`): a code, never a message. */
  readonly error?: string | null;
  /** Names of the fields the write changes (`password` included: the name, never the value). */
  readonly fields: readonly string[];
  /** Values of changed fields worth keeping (`level`, `roles`, `superuser`); secrets are dropped. */
  readonly values?: Readonly<Record<string, unknown>>;
  /** The hash of the plan the write belongs to, when there is one. */
  readonly planHash: string | null;
  readonly trigger: AuditTrigger;
  /** Why a write is made, when the log keeps it: `expired`, `rotation` (a successor key), `rotated` (its predecessor deleted) (issue 30). Absent otherwise. */
  readonly reason?: string;
}

/** One line of the audit log, as written and as read back. */
export interface AuditLine {
  /** ISO-8601, UTC, milliseconds. */
  readonly time: string;
  readonly target: string | null;
  readonly kind: Kind;
  readonly key: string;
  readonly id: number | null;
  readonly action: Action;
  readonly phase: AuditPhase;
  readonly status: AuditStatus | null;
  readonly error: string | null;
  readonly fields: readonly string[];
  readonly values: Readonly<Record<string, AuditValue>>;
  readonly planHash: string | null;
  readonly trigger: AuditTrigger;
  /** `expired`: the delete of an item past its `expires:` / `ttl:` (issue 30). Absent on other lines. */
  readonly reason?: string;
  /** AMSYNC_REVISION, GITHUB_SHA or CI_COMMIT_SHA of the run (revisionFromEnv), else null. */
  readonly revision: string | null;
  readonly process: AuditProcess;
}

/**
 * What a daemon's control line records (no write): a suspension and a resume (`amsync ctl`),
 * the sync windows closing and opening as the daemon sees them, and a `ctl sync
 * --override-window`.
 */
export const auditEvents = ['suspended', 'resumed', 'window_closed', 'window_opened', 'override'] as const;
export type AuditEvent = (typeof auditEvents)[number];

/** What a daemon records about its own control: never a write, so no kind, key or action. */
export interface AuditControlEntry {
  readonly event: AuditEvent;
  /** A suspension's reason (for `resumed`: the one it ended), a window's state; null when none. */
  readonly reason: string | null;
  /** The uid the ctl process said it runs as; null for what the daemon noticed itself (a window). */
  readonly uid: number | null;
}

/**
 * One control line of the audit log: a line of its own shape (it has `event` and no `kind`),
 * so write lines stay as they were and a reader tells them apart by that field.
 */
export interface AuditControlLine {
  /** ISO-8601, UTC, milliseconds. */
  readonly time: string;
  readonly event: AuditEvent;
  /** The daemon's target in a fleet; null for the one service and for a whole fleet. */
  readonly target: string | null;
  readonly reason: string | null;
  readonly uid: number | null;
  readonly revision: string | null;
  readonly process: AuditProcess;
}

/** Any line of the audit log: a write's, or a daemon's control line. */
export type AuditRecord = AuditLine | AuditControlLine;

/** Whether a line read back is a control line (suspend, resume, window, override). */
export function isControlLine(line: AuditRecord): line is AuditControlLine {
  return 'event' in line;
}

const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

/**
 * An audit line read back (`amsync audit`). Unknown fields are accepted and dropped: a later
 * version may add some, and an older reader must still show what it knows. Strings are not
 * length-checked here; the reader escapes them before they reach a terminal.
 */
export const auditLineSchema = z.object({
  time: z.iso.datetime({ offset: true }),
  target: z.string().nullable(),
  kind: z.enum(['sshUser', 'apikey']),
  key: z.string(),
  id: z.number().nullable(),
  action: z.enum(['create', 'update', 'delete']),
  phase: z.enum(auditPhases),
  status: z.enum(auditStatuses).nullable(),
  error: z.string().nullable(),
  fields: z.array(z.string()),
  values: z.record(z.string(), z.union([scalar, z.array(scalar)])),
  planHash: z.string().nullable(),
  trigger: z.enum(auditTriggers),
  reason: z.string().optional(),
  revision: z.string().nullable(),
  process: z.object({ pid: z.number(), host: z.string(), user: z.string() }),
}) satisfies z.ZodType<AuditLine>;

/** A control line read back; unknown fields dropped, as for write lines. */
export const auditControlLineSchema = z.object({
  time: z.iso.datetime({ offset: true }),
  event: z.enum(auditEvents),
  target: z.string().nullable(),
  reason: z.string().nullable(),
  uid: z.number().int().nullable(),
  revision: z.string().nullable(),
  process: z.object({ pid: z.number(), host: z.string(), user: z.string() }),
}) satisfies z.ZodType<AuditControlLine>;

/** Any audit line read back: a write line, else a control line. */
export const auditRecordSchema = z.union([auditLineSchema, auditControlLineSchema]);
