import type { DaemonMode } from './reconciler.js';
import { windowState, type SyncWindow, type WindowState } from './sync-windows.js';

/** `amsync ctl suspend`: why, since when (epoch ms), and who (the ctl's uid, as it said). */
export interface Suspension {
  readonly reason: string;
  readonly since: number;
  readonly by: string | null;
}

const minuteMs = 60_000;

/**
 * Whether the daemon's runs may write, besides its mode and the Lease: not while suspended
 * (`amsync ctl suspend`), not while the sync windows hold writes (daemon.windows), except for
 * the one run per target a `ctl sync --override-window` asked for. Held, a run observes: it
 * plans and reports drift, writes nothing.
 */
export class WriteGate {
  #windows: readonly SyncWindow[];
  #suspension: Suspension | undefined;
  /** Targets whose next run writes whatever the windows say (one run each). */
  readonly #override = new Set<string>();
  readonly #now: () => number;
  /** The windows' state is computed at most once a minute (five-field schedules change on minutes). */
  #cached: { minute: number; state: WindowState } | undefined;

  constructor(windows: readonly SyncWindow[], now: () => number) {
    this.#windows = windows;
    this.#now = now;
  }

  get suspension(): Suspension | undefined {
    return this.#suspension;
  }

  get windowCount(): number {
    return this.#windows.length;
  }

  /** A settings reload brought new windows. */
  setWindows(windows: readonly SyncWindow[]): void {
    this.#windows = windows;
    this.#cached = undefined;
  }

  suspend(reason: string, by: string | null): Suspension {
    this.#suspension = { reason, since: this.#now(), by };
    return this.#suspension;
  }

  /** Returns the suspension it ended, if any. */
  resume(): Suspension | undefined {
    const previous = this.#suspension;
    this.#suspension = undefined;
    return previous;
  }

  /** The next run of each of these targets writes even while a window holds writes. */
  overrideWindow(targets: Iterable<string>): void {
    for (const t of targets) this.#override.add(t);
  }

  window(): WindowState {
    const now = this.#now();
    const minute = Math.floor(now / minuteMs);
    // The reason names an end time, so it is recomputed when the minute changes, never reused across one.
    if (this.#cached?.minute !== minute) this.#cached = { minute, state: windowState(this.#windows, now) };
    return this.#cached.state;
  }

  /** Why writes are held now (`suspended: REASON since T`, or the windows' reason); undefined when they are not. */
  held(): string | undefined {
    if (this.#suspension) return suspendedWords(this.#suspension);
    const window = this.window();
    return window.open ? undefined : `sync window: ${window.reason}`;
  }

  /**
   * The mode of a target's next run: observe while held, unless an override waits for this
   * target (used up by this run; a suspension is not overridden). `held` says why, for the log.
   */
  modeFor(target: string, mode: DaemonMode): { mode: DaemonMode; held?: string; overridden?: true } {
    if (mode === 'observe') return { mode };
    if (this.#suspension) return { mode: 'observe', held: suspendedWords(this.#suspension) };
    const window = this.window();
    const override = this.#override.delete(target);
    if (window.open) return { mode };
    if (override) return { mode, overridden: true };
    return { mode: 'observe', held: `sync window: ${window.reason}` };
  }
}

/** `suspended: change freeze since 2025-01-01T00:00:00.000Z`. */
export function suspendedWords(s: Suspension): string {
  return `suspended: ${s.reason} since ${new Date(s.since).toISOString()}`;
}
