import type { NotifyEvent, Plan, PlannedExpiry } from '../model/index.js';

/** How long before an expiry `access_expiring` is told (and amsync_items_expiring counts it). */
export const expiringWindowMs = 24 * 3_600_000;

/** What the daemon keeps of a run's expiries: the gauges, the warnings told once, when to wake. */
export class ExpiryWatch {
  /** `kind key expiresAt` of the warnings told, while they stay ahead: each is told once. */
  #told = new Set<string>();
  #wakeAt: number | undefined;

  /** When the next run should start for an expiry (an expiry, or 24 h before one); undefined: none. */
  get wakeAt(): number | undefined {
    return this.#wakeAt;
  }

  /** A rotation that falls due, or an overlap that ends (wall ms), after `observe`: the wake-up is the earlier one. */
  alsoWakeAt(at: number | undefined): void {
    if (at !== undefined) this.#wakeAt = Math.min(this.#wakeAt ?? at, at);
  }

  /**
   * The plan of a run made at `now` (wall ms): the gauges' values, the `access_expiring`
   * events not told before, and the next wake-up.
   */
  observe(plan: Plan, now: number, target: string | null): { next: number | undefined; soon: number; events: NotifyEvent[] } {
    const expiries = plan.expiries ?? [];
    const at = (e: PlannedExpiry) => Date.parse(e.expiresAt);
    const soon = expiries.filter((e) => at(e) - now <= expiringWindowMs);
    const fresh = soon.filter((e) => !this.#told.has(toldKey(e)));
    this.#told = new Set(soon.map(toldKey));
    let next: number | undefined;
    let wake: number | undefined;
    for (const e of expiries) {
      const when = at(e);
      next = next === undefined ? when : Math.min(next, when);
      const warnAt = when - expiringWindowMs;
      const w = warnAt > now ? warnAt : when;
      wake = wake === undefined ? w : Math.min(wake, w);
    }
    this.#wakeAt = wake;
    const events: NotifyEvent[] =
      fresh.length === 0
        ? []
        : [
            {
              event: 'access_expiring',
              target,
              summary: { expiring: fresh.length },
              changes: fresh.map((e) => ({ kind: e.kind, action: 'delete' as const, key: e.key })),
              message: `${fresh.map((e) => `${e.kind} ${e.key} expires at ${e.expiresAt}`).join('; ')}`,
            },
          ];
    return { next, soon: soon.length, events };
  }
}

function toldKey(e: PlannedExpiry): string {
  return `${e.kind}\u0000${e.key}\u0000${e.expiresAt}`;
}
