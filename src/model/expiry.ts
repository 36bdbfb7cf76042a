/** The plan's kinds (plan.ts's Kind, written out: plan.ts imports this file). */
type Kind = 'sshUser' | 'apikey';

/**
 * Expiry of an item (README, "The desired-state file"): `expires:` (RFC 3339 with an offset)
 * or `ttl:` (a number and a unit: 30s, 15m, 72h, 90d). Pure: the clock is always a parameter.
 */

/** RFC 3339 date-time with its offset: `2026-12-31T18:00:00Z`, `2026-12-31T19:00:00+01:00`. */
const rfc3339 = /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])[Tt](?:[01]\d|2[0-3]):[0-5]\d:(?:[0-5]\d|60)(?:\.\d+)?(?:[Zz]|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/;

/** A ttl: one positive number and one unit. */
const ttlPattern = /^(\d{1,9})([smhd])$/;
const unitMs: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds since the epoch of an `expires:` value; undefined when it is not RFC 3339 with an offset. */
export function expiresAtMs(text: string): number | undefined {
  if (!rfc3339.test(text)) return undefined;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : undefined;
}

/** Milliseconds of a `ttl:` value (`72h`); undefined when it is not a positive number and a unit. */
export function ttlMs(text: string): number | undefined {
  const m = ttlPattern.exec(text);
  if (!m) return undefined;
  const ms = Number(m[1]) * unitMs[m[2]!]!;
  return ms > 0 ? ms : undefined;
}

/** `2d 4h`, `15m 3s`, `40s`: the largest unit of a remaining time and the next one when not zero (rounded down). */
export function formatRemaining(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const units = [['d', 86_400], ['h', 3600], ['m', 60], ['s', 1]] as const;
  const first = units.findIndex(([, seconds]) => total >= seconds);
  if (first === -1) return '0s';
  const [unit, seconds] = units[first]!;
  const shown = `${Math.floor(total / seconds)}${unit}`;
  const next = units[first + 1];
  const rest = next === undefined ? 0 : Math.floor((total % seconds) / next[1]);
  return rest > 0 ? `${shown} ${rest}${next![0]}` : shown;
}

/** An ISO instant as plans show it: UTC, seconds, no milliseconds unless it has some. */
export function instantText(ms: number): string {
  const iso = new Date(ms).toISOString();
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
}

/** A declared item's expiry not yet reached, as a plan lists it. */
export interface PlannedExpiry {
  readonly kind: Kind;
  readonly key: string;
  /** Remote id; null for an item this plan creates (a ttl then counts from its create). */
  readonly id: number | null;
  /** When it expires (UTC, RFC 3339). */
  readonly expiresAt: string;
  /** Seconds left when the plan was made. */
  readonly remainingSeconds: number;
}

/**
 * When each item was created, for `ttl:`: by kind and remote id, in ms since the epoch (the
 * state file's records of amsync's creates).
 */
export type CreatedTimes = (kind: Kind, id: number) => number | undefined;

/** The time a plan is made at, and what `ttl:` counts from. */
export interface PlanClock {
  /** ms since the epoch. */
  readonly now: number;
  readonly createdAt?: CreatedTimes;
  /** Apikeys in rotation (the state file's `rotating`): by the predecessor's id, its successor and since when (ms). */
  readonly rotating?: ReadonlyMap<number, RotatingKey>;
}

/** One rotating apikey: the predecessor's successor, and when the successor was created (ms). */
export interface RotatingKey {
  readonly successor: number;
  readonly since: number;
}
