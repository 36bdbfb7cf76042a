import type { Action, Kind } from './plan.js';

/**
 * What a webhook can be told about (README, "Teams and governance"). A closed set: each is a label value of
 * amsync_notifications_total and a value of `notify.webhooks[].events`.
 */
export const notifyEventNames = [
  /** A plan found changes to make (observe mode, a dry-run, or before an apply). */
  'drift_found',
  /** A run applied changes (some may have failed: see `summary`). */
  'changes_applied',
  /** A run failed: the service, the network, some changes, or a safety guard. */
  'failure',
  /** A privilege escalation waits for an approval bound to its hash. */
  'approvals_pending',
  /** This replica started or stopped holding the Lease. */
  'leadership_changed',
  /** The desired-state or settings file became invalid (the last good state is kept). */
  'config_invalid',
  /** The daemon was suspended (`amsync ctl suspend`: it observes only) or resumed. */
  'suspension_changed',
  /** An expired item (`expires:` / `ttl:`) was deleted. */
  'access_expired',
  /** An item expires within 24 hours (told once per item and expiry). */
  'access_expiring',
  /** A credential was replaced by a new one: a generated SSH password rotated (its schedule, `--replace`, a lost one set again). */
  'credential_rotated',
] as const;

export type NotifyEventName = (typeof notifyEventNames)[number];

/** One change, as a notification names it: never a field value. */
export interface NotifyChange {
  readonly kind: Kind;
  readonly action: Action;
  readonly key: string;
}

/** Counts of the run or plan; the keys a caller has (create, update, delete, failed...). */
export type NotifySummary = Readonly<Record<string, number>>;

/** What a caller hands to Notifier.notify(); the notifier adds the time and the revision. */
export interface NotifyEvent {
  readonly event: NotifyEventName;
  /** The service's name in a fleet, or null for the one service. */
  readonly target?: string | null;
  readonly summary?: NotifySummary | null;
  /** Only kind, action and key of each are sent, whatever else a caller's objects hold. */
  readonly changes?: readonly NotifyChange[];
  /** One or two sentences for people ("3 changes applied", the failure's message). Scrubbed. */
  readonly message?: string;
}

