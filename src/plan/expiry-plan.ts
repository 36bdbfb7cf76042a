import type { Kind, PlanClock, PlannedExpiry } from '../model/index.js';
import { expiresAtMs, instantText, ttlMs } from '../model/index.js';

/** The reason of the delete of an expired item (summaries count these apart from prune). */
export const expiredReason = 'expired';

/** What the planner needs of a declared item's expiry. */
export interface ExpiringItem {
  readonly expires?: string;
  readonly ttl?: string;
}

/**
 * When a declared item expires, in ms since the epoch; undefined when it declares no expiry
 * (or no clock was given: a plan made without one, as `export` checks its output, knows none).
 * A `ttl:` counts from the item's create as recorded (`clock.createdAt`); an item amsync has no
 * record of counts from now (a sync records that time), an item to create from its create.
 */
export function expiryOf(item: ExpiringItem, kind: Kind, id: number | null, clock: PlanClock | undefined): number | undefined {
  if (clock === undefined) return undefined;
  if (item.expires !== undefined) return expiresAtMs(item.expires);
  if (item.ttl === undefined) return undefined;
  const ttl = ttlMs(item.ttl);
  if (ttl === undefined) return undefined;
  const start = id === null ? undefined : clock.createdAt?.(kind, id);
  return (start ?? clock.now) + ttl;
}

/** The plan's entry of an expiry not reached yet. */
export function plannedExpiry(kind: Kind, key: string, id: number | null, at: number, now: number): PlannedExpiry {
  return { kind, key, id, expiresAt: instantText(at), remainingSeconds: Math.floor((at - now) / 1000) };
}

/** The note of a declared item that expired and does not exist: it is not created. */
export function expiredNotCreatedNote(noun: string, key: string, at: number): string {
  return `${noun} "${key}" expired at ${instantText(at)}: not created (remove it from the file, or change its expiry).`;
}
